#pragma once
// NVTX ranges in the "decode-bench" domain, named after the point, so an nsys or ncu trace reads
// without the source: `NvtxRange range(point_id);` covers the scope. NVTX3 is header-only and
// costs a few nanoseconds when no tool is attached (link CUDA::nvtx3).
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace decode_bench {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) {
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain(), &attributes);
  }
  ~NvtxRange() { nvtxDomainRangePop(domain()); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  static nvtxDomainHandle_t domain() {
    static const nvtxDomainHandle_t handle = nvtxDomainCreateA("decode-bench");
    return handle;
  }
};

}  // namespace decode_bench
