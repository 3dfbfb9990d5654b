#include "sweeps/trace_point.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "pools/length_distribution.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

TraceLengths lengths_of(const std::string& kind, std::int64_t mean, double alpha, double sigma) {
  TraceLengths l;
  l.mean = static_cast<double>(mean);
  l.alpha = alpha;
  l.sigma = sigma;
  if (kind == "uniform") {
    l.kind = TraceLengths::Kind::uniform;
    l.lo = 1;
    l.hi = 2 * mean - 1;
  } else if (kind == "zipf") {
    l.kind = TraceLengths::Kind::zipf;
  } else if (kind == "lognormal") {
    l.kind = TraceLengths::Kind::lognormal;
  } else if (kind == "fixed") {
    l.kind = TraceLengths::Kind::fixed;
  } else {
    throw std::invalid_argument("trace point: trace_lengths \"" + kind + "\": one of fixed, uniform, zipf, lognormal");
  }
  return l;
}

}  // namespace

TracePoint parse_trace_point(const json& p) {
  TracePoint t;
  const std::string kind = p.value("trace_lengths", std::string("fixed"));
  const double alpha = p.value("zipf_alpha", 1.5), sigma = p.value("length_sigma", 0.5);
  t.spec.requests = p.value("requests", 256);
  const double rate = p.value("arrival_rate", 0.0);
  t.spec.arrival = rate > 0 ? TraceArrival::poisson : TraceArrival::all_at_once;
  t.spec.rate = rate > 0 ? rate : 1.0;
  t.spec.prompt = lengths_of(kind, p.value("prompt_len", std::int64_t{256}), alpha, sigma);
  t.spec.output = lengths_of(kind, p.value("output_len", std::int64_t{128}), alpha, sigma);
  t.seed = p.value("seed", std::uint64_t{0});
  t.spec.seed = t.seed;
  t.spec.system_prompt_len = p.value("system_prompt_len", std::int64_t{0});
  t.spec.system_prompts = p.value("system_prompts", 1);
  if (t.spec.system_prompts > 1 && t.spec.system_prompt_len == 0)
    throw std::invalid_argument("trace point: system_prompts " + std::to_string(t.spec.system_prompts) +
                                " needs system_prompt_len > 0 (there is no system prompt to draw)");
  if (auto why = t.spec.invalid_reason(); !why.empty())
    throw std::invalid_argument("trace point: trace_lengths " + kind + ": " + why);
  t.shape.heads_q = p.value("heads_q", 1);
  t.shape.heads_kv = p.value("heads_kv", 1);
  t.shape.head_dim = p.value("head_dim", 128);
  const std::string dtype = p.value("dtype", std::string("fp16"));
  const auto dt = parse_dtype(dtype);
  if (!dt) throw std::invalid_argument("trace point: dtype \"" + dtype + "\" is not a storage type");
  t.dtype = *dt;
  t.paged = p.value("layout", std::string("contiguous")) == "paged";
  t.page_size = p.value("page_size", 16);
  t.page_order = p.value("page_order", std::string("sequential"));
  t.fragmentation = t.paged ? 1.0 : p.value("fragmentation", 1.0);
  t.budget_bytes = p.value("budget_bytes", std::uint64_t{4} << 30);
  t.steps = p.value("steps", std::int64_t{2000});
  t.verify_every = p.value("verify_every", std::int64_t{100});
  t.host_overlap = p.value("host_overlap", false);
  return t;
}

std::int64_t trace_slab_tokens(const TracePoint& t) {
  return static_cast<std::int64_t>(
      std::ceil(t.fragmentation * (static_cast<double>(t.spec.system_prompt_len) + t.spec.prompt.mean + t.spec.output.mean)));
}

std::int64_t trace_longest_request(const std::vector<TraceRequest>& trace) {
  std::int64_t longest = 1;
  for (const TraceRequest& r : trace) longest = std::max(longest, r.prompt_len + r.output_len);
  return longest;
}

std::optional<std::string> trace_unsupported(const TracePoint& t) {
  if (dtype_is_fp8(t.dtype))
    return "dtype " + std::string(dtype_name(t.dtype)) +
           ": a trace writes K/V without per-head FP8 scales; use fp32, fp16 or bf16";
  const std::uint64_t token_bytes =
      2ull * static_cast<std::uint64_t>(t.shape.heads_kv) * t.shape.head_dim * dtype_bytes(t.dtype);
  if (t.paged) {
    if (t.budget_bytes < token_bytes * static_cast<std::uint64_t>(t.page_size))
      return "budget_bytes " + std::to_string(t.budget_bytes) + " holds no page of " + std::to_string(t.page_size) +
             " tokens (" + std::to_string(token_bytes * t.page_size) + " bytes of K + V)";
    if (t.budget_bytes / (token_bytes * t.page_size) > static_cast<std::uint64_t>(kInt32Max))
      return "budget_bytes " + std::to_string(t.budget_bytes) + " holds more than 2^31 - 1 pages";
    return std::nullopt;
  }
  const std::int64_t slab = trace_slab_tokens(t);
  if (slab > kInt32Max)
    return "fragmentation " + std::to_string(t.fragmentation) + ": a slab of " + std::to_string(slab) +
           " tokens exceeds 2^31 - 1";
  if (t.budget_bytes < token_bytes * static_cast<std::uint64_t>(slab))
    return "budget_bytes " + std::to_string(t.budget_bytes) + " holds no slab of " + std::to_string(slab) +
           " tokens (" + std::to_string(token_bytes * slab) + " bytes of K + V)";
  return std::nullopt;
}

std::uint64_t trace_device_bytes(const json& params) {
  const std::uint64_t budget = params.value("budget_bytes", std::uint64_t{4} << 30);
  // q, o, lse and the reference (three doubles per output element, a chunk partial per 256
  // tokens) for at most `requests` sequences: small beside the pool, counted generously.
  const std::uint64_t requests = params.value("requests", std::uint64_t{256});
  const std::uint64_t heads_q = params.value("heads_q", 1), head_dim = params.value("head_dim", 128);
  const std::uint64_t per_seq = heads_q * head_dim * (4 + 4 + 8 * 2) + heads_q * (4 + 8);
  return budget + requests * per_seq * 4 + (64ull << 20);
}

bool trace_step_verified(std::int64_t step, std::int64_t verify_every, std::int64_t max_steps, bool final_step) {
  return step == 0 || (verify_every > 0 && step % verify_every == 0) || step == max_steps - 1 || final_step;
}

double nearest_rank_percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

json trace_steps_json(const std::vector<StepRecord>& records, const std::vector<TraceStepTiming>& timings) {
  if (records.size() != timings.size())
    throw std::invalid_argument("trace_steps_json: " + std::to_string(records.size()) + " records but " +
                                std::to_string(timings.size()) + " timings");
  json s = {{"running", json::array()},   {"queued", json::array()},        {"arrived", json::array()},
            {"admitted", json::array()},  {"rejected", json::array()},      {"preempted", json::array()},
            {"finished", json::array()},  {"bytes_reserved", json::array()}, {"bytes_used", json::array()},
            {"fragmentation", json::array()}, {"decoded", json::array()},   {"gpu_us", json::array()},
            {"host_us", json::array()},   {"plan_us", json::array()},       {"view_us", json::array()},
            {"shared_tokens", json::array()}, {"prefix_levels", json::array()}, {"prefix_sequences", json::array()},
            {"exposed_host_us", json::array()}};
  for (std::size_t i = 0; i < records.size(); ++i) {
    const StepRecord& r = records[i];
    const TraceStepTiming& t = timings[i];
    s["running"].push_back(r.running);
    s["queued"].push_back(r.queued);
    s["arrived"].push_back(r.arrived);
    s["admitted"].push_back(r.admitted);
    s["rejected"].push_back(r.rejected);
    s["preempted"].push_back(r.preempted);
    s["finished"].push_back(r.finished);
    s["bytes_reserved"].push_back(r.bytes_reserved);
    s["bytes_used"].push_back(r.bytes_used);
    s["fragmentation"].push_back(r.fragmentation);
    s["decoded"].push_back(t.decoded);
    s["gpu_us"].push_back(t.gpu_us);
    s["host_us"].push_back(t.host_us);
    s["plan_us"].push_back(t.plan_us);
    s["view_us"].push_back(t.view_us);
    s["shared_tokens"].push_back(r.shared_tokens);
    s["prefix_levels"].push_back(t.prefix_levels);
    s["prefix_sequences"].push_back(t.prefix_sequences);
    s["exposed_host_us"].push_back(t.exposed_host_us);
  }
  return s;
}

json trace_summary_json(const std::vector<StepRecord>& records, const std::vector<TraceStepTiming>& timings) {
  if (records.size() != timings.size())
    throw std::invalid_argument("trace_summary_json: " + std::to_string(records.size()) + " records but " +
                                std::to_string(timings.size()) + " timings");
  std::int64_t tokens = 0, finished = 0, rejected = 0, preempted = 0, peak = 0, shared = 0, prefix_steps = 0;
  double gpu_us = 0, host_us = 0, plan_us = 0, view_us = 0, exposed_us = 0;
  std::vector<double> step_us;
  for (std::size_t i = 0; i < records.size(); ++i) {
    tokens += records[i].running;
    finished += records[i].finished;
    rejected += records[i].rejected;
    preempted += records[i].preempted;
    peak = std::max(peak, records[i].running);
    if (records[i].running > 0) step_us.push_back(timings[i].gpu_us);  // a step without a batch launches nothing
    gpu_us += timings[i].gpu_us;
    host_us += timings[i].host_us;
    plan_us += timings[i].plan_us;
    view_us += timings[i].view_us;
    exposed_us += timings[i].exposed_host_us;
    shared += records[i].shared_tokens;
    prefix_steps += timings[i].prefix_levels > 0;
  }
  const double steps = static_cast<double>(records.size());
  json s = {{"steps", records.size()},
            {"tokens", tokens},
            {"finished", finished},
            {"rejected", rejected},
            {"preempted", preempted},
            {"peak_running", peak},
            {"mean_running", steps > 0 ? static_cast<double>(tokens) / steps : 0.0},
            {"gpu_seconds", gpu_us * 1e-6},
            {"host_seconds", host_us * 1e-6},
            {"plan_seconds", plan_us * 1e-6},
            {"view_seconds", view_us * 1e-6},
            {"schedule_seconds", std::max(0.0, host_us - plan_us - view_us) * 1e-6},
            {"shared_prompt_tokens", shared},
            {"shared_prefix_steps", prefix_steps},
            {"tokens_per_s", gpu_us > 0 ? static_cast<double>(tokens) / (gpu_us * 1e-6) : 0.0},
            {"tokens_per_s_with_host",
             gpu_us + host_us > 0 ? static_cast<double>(tokens) / ((gpu_us + host_us) * 1e-6) : 0.0},
            {"host_over_gpu", gpu_us > 0 ? host_us / gpu_us : 0.0},
            {"exposed_host_seconds", exposed_us * 1e-6},
            {"exposed_host_over_gpu", gpu_us > 0 ? exposed_us / gpu_us : 0.0}};
  double mean = 0;
  for (double v : step_us) mean += v;
  s["mean_step_us"] = step_us.empty() ? 0.0 : mean / static_cast<double>(step_us.size());
  s["p50_step_us"] = nearest_rank_percentile(step_us, 50);
  s["p99_step_us"] = nearest_rank_percentile(step_us, 99);
  return s;
}

}  // namespace decode_bench::sweeps
