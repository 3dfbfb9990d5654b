#include "sweeps/capacity_runner.hpp"

#include <string>

#include "harness/cuda_check.hpp"
#include "harness/device_query.hpp"
#include "harness/kernel_kind.hpp"
#include "harness/results_schema.hpp"
#include "pools/capacity.hpp"
#include "pools/pool_error.hpp"
#include "sweeps/capacity_point.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

class CapacityRunner final : public PointRunner {
 public:
  std::string name() const override { return std::string(kernel_name(KernelKind::capacity)); }
  bool needs_gpu() const override { return false; }  // the accounting backend counts exactly
  // device_bytes_needed stays the default estimate, budget_bytes: the device run allocates up to
  // the budget (whole slabs or pages below it), and the host run needs no device memory at all.

  json run(const Point& point, RunContext& ctx) override {
    const CapacityPoint c = parse_capacity_point(point.parameters);
    // The same test `decode-bench capacity --backend auto` makes, on the sweep's device.
    const bool with_device = !device_unavailable_reason(ctx.device);
    if (with_device) DB_CUDA_CHECK(cudaSetDevice(ctx.device));
    // A budget the GPU cannot allocate throws PoolError(OutOfDeviceMemory): the driver records
    // the point as skipped, like any point too big for the GPU.
    const CapacityCheck check = measure_capacity_checked(c.pool, c.query, with_device);
    json capacity = check.measured().to_json();
    capacity["lengths"] = c.query.lengths.describe();
    if (check.device) capacity["host_sequences"] = check.host.sequences;
    json record = {{"capacity", capacity}, {"parameters", {{"max_seq_len", c.query.max_seq_len}}}};
    if (!check.agree()) {
      record["status"] = std::string(kStatusError);
      record["reason"] = "device arenas held " + std::to_string(check.device->sequences) +
                         " sequences, the host simulation " + std::to_string(check.host.sequences);
      return record;
    }
    record["status"] = std::string(kStatusOk);
    return record;
  }
};

}  // namespace

std::unique_ptr<PointRunner> make_capacity_runner() { return std::make_unique<CapacityRunner>(); }

}  // namespace decode_bench::sweeps
