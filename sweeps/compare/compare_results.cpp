#include "sweeps/compare/compare_results.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "sweeps/axes.hpp"
#include "sweeps/compare/ceiling_fraction.hpp"

namespace decode_bench::compare {
namespace {

using nlohmann::json;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The points of `doc` by their timed launch's id (sweeps::timed_launch_id); two points of one
// document with the same one cannot be told apart, so they are refused by name.
std::map<std::string, const json*> points_by_timed_launch(const json& doc, const std::string& side) {
  std::map<std::string, const json*> out;
  for (const json& p : doc.at("points")) {
    const std::string id = p.at("id").get<std::string>();
    const auto [it, fresh] = out.emplace(sweeps::timed_launch_id(id), &p);
    if (!fresh) {
      const std::string other = it->second->at("id").get<std::string>();
      throw std::invalid_argument(side + (other == id ? " has the point '" + id + "' twice"
                                                      : " has two points of one timed launch, '" + other + "' and '" +
                                                            id + "' (their ids differ only in axes beside the timing, "
                                                                 "such as counters)"));
    }
  }
  return out;
}

// The number at a dotted path, or nullopt when absent or not a number.
std::optional<double> number_at(const json& point, const std::string& path) {
  const json* cur = &point;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object() || !cur->contains(key)) return std::nullopt;
    cur = &(*cur)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!cur->is_number()) return std::nullopt;
  return cur->get<double>();
}

// How the metric scales with the median time of the same point: +1 (a time), -1 (a throughput,
// bytes or FLOPs over the median), 0 (not derived from the median: no interval from samples).
int time_exponent(const std::string& metric, Normalize normalize) {
  if (normalize == Normalize::ceilings) return -1;
  if (metric == "timing.median_us") return 1;
  if (metric == "achieved.gbps" || metric == "achieved.tflops" || metric == "achieved.fraction_of_dram_read" ||
      metric == "achieved.fraction_of_read_floor")
    return -1;
  return 0;
}

std::vector<double> samples_of(const json& point) {
  std::vector<double> out;
  const json* t = point.contains("timing") ? &point["timing"] : nullptr;
  if (!t || !t->is_object() || !t->contains("samples_us") || !(*t)["samples_us"].is_array()) return out;
  for (const json& s : (*t)["samples_us"]) {
    if (!s.is_number() || !std::isfinite(s.get<double>()) || s.get<double>() <= 0) return {};
    out.push_back(s.get<double>());
  }
  return out;
}

std::string experiment_of(const json& point) {
  if (point.contains("experiment") && point["experiment"].is_string()) return point["experiment"].get<std::string>();
  const auto slash = point.at("id").get<std::string>().find('/');
  return slash == std::string::npos ? "all" : point["id"].get<std::string>().substr(0, slash);
}

// The bad direction as a factor > 1 of "badness": ratio for lower-is-better, 1 / ratio otherwise.
double badness(double ratio, bool lower_is_better) { return lower_is_better ? ratio : 1 / ratio; }

Verdict decide(const PointComparison& c, bool lower_is_better, double threshold) {
  // In badness units (> 1 is worse): lower-is-better, a ratio above 1 + t regresses; higher-is-
  // better, a ratio below 1 - t. Without samples the threshold alone decides (as Google
  // Benchmark's compare.py does without repetitions).
  const double bad_limit = lower_is_better ? 1 + threshold : 1 / (1 - threshold);
  const double good_limit = lower_is_better ? 1 - threshold : 1 / (1 + threshold);
  const double bad = badness(c.ratio, lower_is_better);
  if (!c.lo || !c.hi) return bad > bad_limit ? Verdict::regression : bad < good_limit ? Verdict::improvement : Verdict::unchanged;
  const double bad_lo = std::min(badness(*c.lo, lower_is_better), badness(*c.hi, lower_is_better));
  const double bad_hi = std::max(badness(*c.lo, lower_is_better), badness(*c.hi, lower_is_better));
  if (bad_lo > 1 && bad > bad_limit) return Verdict::regression;     // significant and large
  if (bad_hi < 1 && bad < good_limit) return Verdict::improvement;
  if (bad_lo <= 1 && bad_hi > bad_limit) return Verdict::noisy;      // cannot rule out either
  return Verdict::unchanged;
}

void summarize_group(GroupSummary& g, const PointComparison& c, bool lower_is_better, double& log_sum) {
  ++g.count;
  g.regressions += c.verdict == Verdict::regression;
  g.improvements += c.verdict == Verdict::improvement;
  g.noisy += c.verdict == Verdict::noisy;
  log_sum += std::log(c.ratio);
  if (g.worst_id.empty() || badness(c.ratio, lower_is_better) > badness(g.worst_ratio, lower_is_better)) {
    g.worst_id = c.id;
    g.worst_ratio = c.ratio;
  }
}

std::string string_at(const json& doc, const char* a, const char* b) {
  if (doc.contains(a) && doc[a].is_object() && doc[a].contains(b) && doc[a][b].is_string())
    return doc[a][b].get<std::string>();
  return "?";
}

// meta.environment (the DECODE_BENCH_* variables set for the run), or {} where absent.
json environment_of(const json& doc) {
  const json& meta = doc.at("meta");
  return meta.contains("environment") && meta["environment"].is_object() ? meta["environment"] : json::object();
}

// meta.git.sha, or "" where the run did not record it.
std::string sha_of(const json& doc) {
  const json& meta = doc.at("meta");
  if (meta.contains("git") && meta["git"].is_object() && meta["git"].contains("sha") && meta["git"]["sha"].is_string())
    return meta["git"]["sha"].get<std::string>();
  return "";
}

// A side's runs must be repeats of one build: one device model, one commit, one environment.
void check_runs_of_one_build(std::span<const json> runs, const char* side) {
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto differs = [&](const std::string& what, const std::string& first, const std::string& other) {
      if (first != other)
        throw std::invalid_argument(std::string(side) + "'s runs are not repeats of one build: its file 1 has " + what +
                                    " '" + first + "', its file " + std::to_string(i + 1) + " '" + other + "'");
    };
    differs("device", string_at(runs[0], "device", "name"), string_at(runs[i], "device", "name"));
    const std::string sha0 = sha_of(runs[0]), sha = sha_of(runs[i]);
    if (!sha0.empty() && !sha.empty()) differs("commit", sha0, sha);
    differs("environment", environment_of(runs[0]).dump(), environment_of(runs[i]).dump());
  }
}

std::string run_name(const char* side, std::size_t i, std::size_t runs) {
  return runs == 1 ? std::string(side) : std::string(side) + " file " + std::to_string(i + 1);
}

// One point of one side over its runs: the metric (or the fraction of each run's ceiling) and the
// timing samples of each run.
struct SideValues {
  std::vector<double> values;
  std::vector<std::vector<double>> samples;
  std::vector<std::string> bounds;
  // False when the point is not ok there or has no positive value.
  bool add(const json& doc, const json& point, const CompareOptions& options, bool normalized) {
    std::optional<double> v;
    std::string bound;
    if (normalized) {
      if (const auto f = ceiling_fraction(doc, point)) {
        v = f->value;
        bound = f->bound;
      }
    } else {
      v = number_at(point, options.metric);
    }
    if (point.at("status") != "ok" || !v || !(*v > 0)) return false;
    values.push_back(*v);
    samples.push_back(samples_of(point));
    bounds.push_back(bound);
    return true;
  }
  bool every_run_has_samples() const {
    return std::none_of(samples.begin(), samples.end(), [](const auto& s) { return s.empty(); });
  }
  int sample_count() const {
    std::size_t n = 0;
    for (const auto& s : samples) n += s.size();
    return static_cast<int>(n);
  }
};

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::unchanged: return "unchanged";
    case Verdict::improvement: return "improvement";
    case Verdict::regression: return "regression";
    case Verdict::noisy: return "noisy";
  }
  return "?";
}

bool CompareReport::any_regression() const {
  for (const auto& p : common)
    if (p.regressed) return true;
  return false;
}

bool metric_lower_is_better(const std::string& metric) {
  return metric.rfind("timing.", 0) == 0 || ends_with(metric, "_us") || ends_with(metric, "_ns") ||
         ends_with(metric, "_ms");
}

CompareReport compare_results(const json& a, const json& b, const CompareOptions& options) {
  return compare_runs(std::span<const json>(&a, 1), std::span<const json>(&b, 1), options);
}

CompareReport compare_runs(std::span<const json> a_runs, std::span<const json> b_runs, const CompareOptions& options) {
  if (a_runs.empty() || b_runs.empty()) throw std::invalid_argument("a side of the comparison has no results file");
  check_runs_of_one_build(a_runs, "A");
  check_runs_of_one_build(b_runs, "B");
  const json& a = a_runs.front();
  const json& b = b_runs.front();
  if (!(options.threshold >= 0 && options.threshold < 1))
    throw std::invalid_argument("--threshold must be in [0, 1), got " + std::to_string(options.threshold));
  if (options.metric.empty() || options.metric.front() == '.' || options.metric.back() == '.')
    throw std::invalid_argument("--metric '" + options.metric + "' is not a dotted path like achieved.gbps");
  if (!(options.confidence > 0 && options.confidence < 1))
    throw std::invalid_argument("--confidence must be in (0, 1), got " + std::to_string(options.confidence));
  if (options.resamples < 100)
    throw std::invalid_argument("--resamples must be >= 100, got " + std::to_string(options.resamples));
  const bool normalized = options.normalize == Normalize::ceilings;
  if (normalized)
    for (const auto& [runs, side] : {std::pair{a_runs, "A"}, std::pair{b_runs, "B"}})
      for (const json& doc : runs)
        if (!ceiling_value(doc, "dram_read"))
          throw std::invalid_argument("--normalize ceilings: " + std::string(side) +
                                      " has no measured ceilings.dram_read (run the sweep with ceilings)");

  CompareReport report;
  report.metric = normalized ? kFractionOfCeiling : options.metric;
  report.lower_is_better =
      normalized ? false : options.lower_is_better.value_or(metric_lower_is_better(options.metric));
  report.threshold = options.threshold;
  report.runs_a = a_runs.size();
  report.runs_b = b_runs.size();
  report.device_a = string_at(a, "device", "name");
  report.device_b = string_at(b, "device", "name");
  report.preset_a = string_at(a, "meta", "preset");
  report.preset_b = string_at(b, "meta", "preset");
  // Every ceiling both runs measured, dram_read first, whatever the metric: a time or a fraction
  // compared across two runs is read against how their ceilings moved.
  std::vector<std::string> names = {"dram_read"};
  if (a.contains("ceilings") && a["ceilings"].is_object())
    for (const auto& [name, ceiling] : a["ceilings"].items())
      if (name != "dram_read") names.push_back(name);
  for (const std::string& name : names) {
    const auto va = ceiling_value(a, name), vb = ceiling_value(b, name);
    if (va && vb) report.ceilings.push_back({name, a["ceilings"][name].value("unit", ""), *va, *vb, *vb / *va});
  }
  const json env_a = environment_of(a), env_b = environment_of(b);
  std::map<std::string, std::pair<std::string, std::string>> env;
  for (const auto& [k, v] : env_a.items()) env[k].first = v.is_string() ? v.get<std::string>() : v.dump();
  for (const auto& [k, v] : env_b.items()) env[k].second = v.is_string() ? v.get<std::string>() : v.dump();
  for (const auto& [k, v] : env)
    if (v.first != v.second)
      report.environment_differences.push_back(k + ": A=" + (v.first.empty() ? "(unset)" : v.first) +
                                               " B=" + (v.second.empty() ? "(unset)" : v.second));
  const int exponent = time_exponent(options.metric, options.normalize);

  const auto by_timed_launch = [](std::span<const json> runs, const char* side) {
    std::vector<std::map<std::string, const json*>> out;
    for (std::size_t i = 0; i < runs.size(); ++i)
      out.push_back(points_by_timed_launch(runs[i], run_name(side, i, runs.size())));
    return out;
  };
  const auto in_a = by_timed_launch(a_runs, "A"), in_b = by_timed_launch(b_runs, "B");
  std::map<std::string, bool> seen_in_a;
  for (const json& first_a : a.at("points")) {
    const std::string id = first_a.at("id").get<std::string>();
    const std::string key = sweeps::timed_launch_id(id);
    seen_in_a[key] = true;
    if (!in_b.front().count(key)) {
      report.only_in_a.push_back(id);
      continue;
    }
    if (in_b.front().at(key)->at("id") != first_a.at("id")) ++report.matched_beside_timing;
    // The point in every run of each side; its value there (the metric, or its fraction of the
    // run's ceiling) and samples.
    SideValues sa, sb;
    bool comparable = true;
    for (auto [runs, maps, side] : {std::tuple{a_runs, &in_a, &sa}, std::tuple{b_runs, &in_b, &sb}})
      for (std::size_t i = 0; i < runs.size() && comparable; ++i) {
        const auto it = (*maps)[i].find(key);
        comparable = it != (*maps)[i].end() && side->add(runs[i], *it->second, options, normalized);
      }
    if (!comparable) {
      report.not_comparable.push_back(id);
      continue;
    }
    PointComparison c;
    c.id = id;
    c.experiment = experiment_of(first_a);
    c.a = median_of(sa.values);
    c.b = median_of(sb.values);
    c.ratio = c.b / c.a;
    // Empty unless normalized: the ceiling each side's point is a fraction of.
    c.bound = sa.bounds.front() == sb.bounds.front() ? sa.bounds.front() : sa.bounds.front() + "/" + sb.bounds.front();
    for (const auto& cr : report.ceilings)
      if (cr.name == c.bound) c.bound_ratio = cr.ratio;
    c.samples_a = sa.sample_count();
    c.samples_b = sb.sample_count();
    if (exponent != 0 && sa.every_run_has_samples() && sb.every_run_has_samples()) {
      // The interval of median(B) / median(A) in time, carried to the metric (metric ~ time^e),
      // centred on the recorded metric ratio; with several runs a side, runs are resampled too.
      const RatioInterval t =
          bootstrap_median_ratio_of_runs(sa.samples, sb.samples, options.confidence, options.resamples, options.seed);
      const double lo = std::pow(t.lo / t.ratio, exponent), hi = std::pow(t.hi / t.ratio, exponent);
      c.lo = c.ratio * std::min(lo, hi);
      c.hi = c.ratio * std::max(lo, hi);
    }
    c.verdict = decide(c, report.lower_is_better, options.threshold);
    c.regressed = c.verdict == Verdict::regression;
    report.common.push_back(c);
  }
  for (const auto& [key, p] : in_b.front())
    if (!seen_in_a.count(key)) report.only_in_b.push_back(p->at("id").get<std::string>());

  std::map<std::string, std::size_t> group_of;
  std::vector<double> group_logs;
  double overall_log = 0;
  for (const auto& c : report.common) {
    auto [it, fresh] = group_of.emplace(c.experiment, report.experiments.size());
    if (fresh) {
      GroupSummary g;
      g.experiment = c.experiment;
      report.experiments.push_back(g);
      group_logs.push_back(0);
    }
    summarize_group(report.experiments[it->second], c, report.lower_is_better, group_logs[it->second]);
    summarize_group(report.overall, c, report.lower_is_better, overall_log);
  }
  for (std::size_t i = 0; i < report.experiments.size(); ++i)
    report.experiments[i].geomean_ratio = std::exp(group_logs[i] / static_cast<double>(report.experiments[i].count));
  if (report.overall.count) report.overall.geomean_ratio = std::exp(overall_log / static_cast<double>(report.overall.count));
  return report;
}

}  // namespace decode_bench::compare
