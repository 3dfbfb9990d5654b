#pragma once
// A small hand-written results document for the table, CSV and `show` tests: two experiments, a
// timed point, a failed verification, a skipped point whose reason holds a comma and double
// quotes, a capacity count and an error. It satisfies the results schema.
#include <nlohmann/json.hpp>

#include "harness/results_schema.hpp"
#include "sweeps/driver.hpp"

namespace decode_bench::testing {

inline nlohmann::json sample_results_document() {
  using nlohmann::json;
  json doc = make_results_document(make_meta({"decode-bench", "sweep"}, "t"), sweeps::host_device_info());
  doc["device"]["name"] = "GPU A";
  doc["points"] = json::array();
  doc["points"].push_back(
      {{"id", "e/T=4096"},
       {"experiment", "e"},
       {"parameters", {{"T", 4096}, {"kernel", "baseline"}}},
       {"status", "ok"},
       {"timing", {{"median_us", 444.469}, {"repetitions", 5}}},
       {"model", {{"bytes", 2098180}, {"flops", 2097152}}},
       {"achieved",
        {{"gbps", 4.7206},
         {"tflops", 0.0047},
         {"fraction_of_dram_read", 0.0015058},
         {"fraction_of_read_floor", 0.0103389}}},
       {"verification",
        {{"passed", true}, {"max_abs_error", 1.84e-08}, {"max_rel_error", 3.7e-08}, {"tolerance", 0.001}}}});
  doc["points"].push_back(
      {{"id", "e/T=8192"},
       {"experiment", "e"},
       {"parameters", {{"T", 8192}, {"kernel", "baseline"}}},
       {"status", "verification_failed"},
       {"reason", "FAILED: max_rel_error 0.05 (tol 0.001)"},
       {"verification",
        {{"passed", false}, {"max_abs_error", 0.0123}, {"max_rel_error", 0.05}, {"tolerance", 0.001}}}});
  doc["points"].push_back({{"id", "e/T=1048576"},
                           {"experiment", "e"},
                           {"parameters", {{"T", 1048576}, {"kernel", "baseline"}}},
                           {"status", "skipped"},
                           {"reason", "needs 9 GiB, \"huge\""}});
  doc["points"].push_back({{"id", "cap/page_size=16"},
                           {"experiment", "cap"},
                           {"parameters", {{"kernel", "capacity"}, {"page_size", 16}}},
                           {"status", "ok"},
                           {"capacity",
                            {{"backend", "accounting"},
                             {"sequences", 4096},
                             {"bytes_reserved", 1073741824},
                             {"bytes_used", 1073741824},
                             {"fragmentation", 0.0}}}});
  doc["points"].push_back({{"id", "cap/page_size=0"},
                           {"experiment", "cap"},
                           {"parameters", {{"kernel", "capacity"}, {"page_size", 0}}},
                           {"status", "error"},
                           {"reason", "boom"}});
  return doc;
}

}  // namespace decode_bench::testing
