// `decode-bench capacity`: sequences held per memory budget, contiguous vs paged (seed paper,
// Figure 5, and beyond). Always runs the exact host simulation (accounting backend); with a GPU
// (--backend auto|device) it also runs every point with real device arenas and checks that the
// two counts agree.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/device_query.hpp"
#include "harness/json_file.hpp"
#include "pools/capacity.hpp"
#include "pools/latent_cache.hpp"
#include "pools/pool_error.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/cli/window_capacity_table.hpp"

namespace decode_bench::cli {
namespace {

struct CapacityOptions {
  std::string preset;
  std::string budget = "4GiB";
  int heads_kv = 1;
  int head_dim = 128;
  std::string attention = "mha";  // mla: one latent row of kv_lora_rank + rope_dim per token and layer
  int kv_lora_rank = 512;
  int rope_dim = 64;
  bool kv_shape_given = false;  // --heads-kv or --head-dim on the command line
  int grid_options_given = 0;   // how many grid options the command line names
  std::string dtype = "fp32";
  int layers = 1;
  std::string lengths = "fixed:512";
  std::vector<std::int64_t> max_seq_lens = {512, 1024, 2048, 4096};
  std::vector<int> page_sizes = {16};
  std::int64_t prefix = 0;
  std::uint64_t seed = 1;
  std::string page_order = "sequential";
  std::string backend = "auto";
  std::string output;
};

struct Point {
  std::string section;
  PoolKind pool;
  CapacityQuery query;
  int latent_row = 0;  // MLA: kv_lora_rank + rope_dim values per token and layer; 0 for MHA
};

struct Row {
  Point point;
  CapacityCheck counts;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One contiguous point per max_seq_len; paged points per page size, with and without sharing
// when there is a prefix (contiguous has nothing to share).
void add_grid(std::vector<Point>& points, const std::string& section, CapacityQuery base,
              const std::vector<std::int64_t>& max_seq_lens, const std::vector<int>& page_sizes) {
  for (std::int64_t max_len : max_seq_lens) {
    CapacityQuery q = base;
    q.max_seq_len = max_len;
    q.share_prefix = false;
    points.push_back({section, PoolKind::contiguous, q});
    for (int ps : page_sizes) {
      q.page_size = ps;
      for (bool share : base.prefix > 0 ? std::vector<bool>{true, false} : std::vector<bool>{false}) {
        q.share_prefix = share;
        points.push_back({section, PoolKind::paged, q});
      }
    }
  }
}

std::vector<Point> figure5_preset() {
  std::vector<Point> points;
  CapacityQuery fig5;  // 4 GiB, FP32, 1 KV head, d = 128, page 16, length 512
  add_grid(points, "figure5", fig5, {512, 1024, 2048, 4096}, {16});
  CapacityQuery zipf = fig5;
  zipf.lengths = LengthDistribution::parse("zipf:mean=512,s=1.1");
  add_grid(points, "zipf", zipf, {1024, 4096}, {16});
  CapacityQuery model = fig5;  // Llama-3-8B-like: 32 layers x 8 KV heads x 128, FP16
  model.layout = {8, 128, DType::fp16};
  model.layers = 32;
  model.lengths = LengthDistribution::parse("uniform:64..2048");
  add_grid(points, "model-32x8x128-fp16", model, {2048, 8192}, {16});
  CapacityQuery prefix = fig5;  // 384 shared tokens + 128 own per sequence
  prefix.prefix = 384;
  prefix.lengths = LengthDistribution::fixed(128);
  add_grid(points, "shared-prefix", prefix, {512}, {16});
  CapacityQuery model_prefix = model;  // a 1000-token system prompt + uniform replies
  model_prefix.prefix = 1000;
  model_prefix.lengths = LengthDistribution::parse("uniform:64..512");
  add_grid(points, "model-shared-prefix", model_prefix, {2048}, {16});
  return points;
}

std::vector<Point> custom_points(const CapacityOptions& o) {
  CapacityQuery q;
  const auto budget = parse_byte_size(o.budget);
  if (!budget || *budget == 0) throw UsageError("--budget '" + o.budget + "': expected bytes like 4GiB, 512MiB, 4096");
  q.budget_bytes = *budget;
  const auto dtype = parse_dtype(o.dtype);
  if (!dtype) throw UsageError("--dtype '" + o.dtype + "': expected " + std::string(dtype_choices()));
  int latent_row = 0;
  if (o.attention == "mla") {
    if (o.kv_shape_given)
      throw UsageError("--attention mla takes no --heads-kv or --head-dim: the latent cache is one row of "
                       "--kv-lora-rank + --rope-dim values per token and layer");
    if (o.kv_lora_rank < 1) throw UsageError("--kv-lora-rank " + std::to_string(o.kv_lora_rank) + ": must be >= 1");
    if (o.rope_dim < 0) throw UsageError("--rope-dim " + std::to_string(o.rope_dim) + ": must be >= 0");
    if (*dtype != DType::fp16 && *dtype != DType::bf16 && *dtype != DType::fp8_e4m3)
      throw UsageError("--dtype '" + o.dtype + "': the MLA latent cache is fp16, bf16 or fp8_e4m3");
    latent_row = o.kv_lora_rank + o.rope_dim;
    try {
      q.layout = latent_capacity_layout(latent_row, *dtype);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--kv-lora-rank + --rope-dim: ") + e.what());
    }
  } else if (o.attention == "mha") {
    q.layout = {o.heads_kv, o.head_dim, *dtype};
  } else {
    throw UsageError("--attention '" + o.attention + "': expected mha or mla");
  }
  q.layers = o.layers;
  try {
    q.lengths = LengthDistribution::parse(o.lengths);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  q.prefix = o.prefix;
  q.seed = o.seed;
  const auto order = parse_page_order(o.page_order);
  if (!order) throw UsageError("--page-order '" + o.page_order + "': expected sequential, shuffled or churned");
  q.page_order = *order;
  std::vector<Point> points;
  add_grid(points, latent_row > 0 ? "custom-mla" : "custom", q, o.max_seq_lens, o.page_sizes);
  for (auto& p : points) p.latent_row = latent_row;
  for (const auto& p : points)
    if (auto r = p.query.invalid_reason(); !r.empty()) throw UsageError(r);
  return points;
}

nlohmann::json row_json(const Row& row) {
  const auto& q = row.point.query;
  nlohmann::json j = {{"section", row.point.section},
                      {"pool", pool_kind_name(row.point.pool)},
                      {"budget_bytes", q.budget_bytes},
                      {"attention", row.point.latent_row > 0 ? "mla" : "mha"},
                      {"dtype", dtype_name(q.layout.dtype)},
                      {"layers", q.layers},
                      {"lengths", q.lengths.describe()},
                      {"bytes_per_token", q.layout.token_kv_bytes() * static_cast<std::uint64_t>(q.layers)},
                      {"max_seq_len", q.max_seq_len},
                      {"prefix", q.prefix},
                      {"seed", q.seed}};
  if (row.point.latent_row > 0) {
    j["latent_row"] = row.point.latent_row;  // kv_lora_rank + rope_dim, stored once per token and layer
  } else {
    j["heads_kv"] = q.layout.heads_kv;
    j["head_dim"] = q.layout.head_dim;
  }
  if (row.point.pool == PoolKind::paged) {
    j["page_size"] = q.page_size;
    j["page_order"] = page_order_name(q.page_order);
  }
  if (q.prefix > 0) j["share_prefix"] = q.share_prefix;
  j["host"] = row.counts.host.to_json();
  if (row.counts.device) j["device"] = row.counts.device->to_json();
  return j;
}

std::string error_kind(const std::string& stopped_by) { return stopped_by.substr(0, stopped_by.find(':')); }

void print_table(const std::vector<Row>& rows) {
  std::string section;
  for (const auto& row : rows) {
    const auto& q = row.point.query;
    if (row.point.section != section) {
      section = row.point.section;
      const std::string shape =
          row.point.latent_row > 0
              ? "MLA latent row of " + std::to_string(row.point.latent_row)
              : std::to_string(q.layout.heads_kv) + " KV head(s) x d=" + std::to_string(q.layout.head_dim);
      // MLA's bytes per token are the point of its section; MHA's header stays as it was.
      const std::string per_token =
          row.point.latent_row > 0
              ? " (" + std::to_string(q.layout.token_kv_bytes() * static_cast<std::uint64_t>(q.layers)) + " B per token)"
              : std::string();
      std::printf("\n[%s] budget %s, %d layer(s) x %s %s%s, lengths %s%s\n", section.c_str(),
                  format_bytes(q.budget_bytes).c_str(), q.layers, shape.c_str(),
                  std::string(dtype_name(q.layout.dtype)).c_str(), per_token.c_str(), q.lengths.describe().c_str(),
                  q.prefix > 0 ? (", shared prefix " + std::to_string(q.prefix)).c_str() : "");
      std::printf("  %-10s %8s %5s %-6s %10s %12s %12s %7s  %-15s%s\n", "pool", "max_len", "page", "prefix", "sequences",
                  "reserved", "used", "frag", "stopped by", rows.back().counts.device ? "  device" : "");
    }
    const bool paged = row.point.pool == PoolKind::paged;
    const CapacityResult& host = row.counts.host;
    const auto& s = host.stats;
    std::printf("  %-10s %8lld %5s %-6s %10lld %12s %12s %6.1f%%  %-15s", std::string(pool_kind_name(row.point.pool)).c_str(),
                static_cast<long long>(q.max_seq_len), paged ? std::to_string(q.page_size).c_str() : "-",
                q.prefix == 0 ? "-" : (q.share_prefix ? "fork" : "copy"), static_cast<long long>(host.sequences),
                format_bytes(s.bytes_reserved).c_str(), format_bytes(s.bytes_used).c_str(), 100 * s.fragmentation(),
                error_kind(host.stopped_by).c_str());
    if (row.counts.device) std::printf("  %6lld", static_cast<long long>(row.counts.device->sequences));
    std::printf("\n");
  }
}

int run_capacity(const CapacityOptions& o, bool grid_given, bool budget_given, const CommandContext& ctx) {
  if (o.preset == "sliding-window") {
    // Its own table (sweeps/cli/window_capacity_table.hpp): the models are fixed, the budget is not.
    if (o.grid_options_given > (budget_given ? 1 : 0))
      throw UsageError("--preset sliding-window takes --budget and --output only");
    const auto budget = parse_byte_size(budget_given ? o.budget : "16GiB");
    if (!budget || *budget == 0) throw UsageError("--budget '" + o.budget + "': expected bytes like 4GiB, 512MiB, 4096");
    if (o.backend != "auto" && o.backend != "host")
      throw UsageError("--preset sliding-window runs the host simulation only (--backend '" + o.backend + "')");
    return run_window_capacity(*budget, o.output, ctx.argv);
  }
  if (!o.preset.empty() && o.preset != "figure5")
    throw UsageError("--preset '" + o.preset + "': expected figure5 or sliding-window");
  if (!o.preset.empty() && grid_given) throw UsageError("--preset figure5 cannot be combined with grid options");
  if (o.backend != "auto" && o.backend != "host" && o.backend != "device")
    throw UsageError("--backend '" + o.backend + "': expected auto, host or device");
  const auto gpu_missing = o.backend == "host" ? std::optional<std::string>("not asked for") : device_unavailable_reason(0);
  if (o.backend == "device" && gpu_missing) throw UsageError("--backend device: " + *gpu_missing);
  const bool use_device = !gpu_missing;
  const auto points = grid_given ? custom_points(o) : figure5_preset();

  std::vector<Row> rows;
  bool agree = true;
  for (const auto& p : points) {
    Row row{p, measure_capacity_checked(p.pool, p.query, use_device)};
    if (!row.counts.agree()) {
      agree = false;
      std::cerr << "decode-bench: capacity: device and host simulation disagree for " << pool_kind_name(p.pool)
                << " max_seq_len " << p.query.max_seq_len << ": " << row.counts.device->sequences << " vs "
                << row.counts.host.sequences << "\n";
    }
    rows.push_back(std::move(row));
  }
  std::printf("decode-bench capacity: host simulation (accounting backend)%s\n",
              use_device ? " and real device arenas (column 'device')" : "");
  print_table(rows);
  if (!o.output.empty()) {
    nlohmann::json doc = {{"tool", "decode-bench capacity"}, {"argv", ctx.argv}, {"rows", nlohmann::json::array()}};
    for (const auto& row : rows) doc["rows"].push_back(row_json(row));
    write_json_atomic(o.output, doc);
    std::printf("\nwrote %s\n", o.output.c_str());
  }
  return agree ? kExitOk : kExitRunFailed;
}

}  // namespace

void add_capacity_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand(
      "capacity",
      "How many sequences each KV pool holds in a memory budget (default: the seed paper's Figure 5 plus extensions)");
  static CapacityOptions o;
  sub->add_option("--preset", o.preset,
                  "figure5 (the default when no grid option is given) or sliding-window (gpt-oss-120b, gpt-oss-20b, "
                  "Gemma-3-27B at 32K and 128K: the windowed layers releasing the pages behind the window; "
                  "--budget, default 16GiB)");
  const std::vector<CLI::Option*> grid = {
      sub->add_option("--budget", o.budget, "K+V bytes, e.g. 4GiB, 512MiB, 4GB")->capture_default_str(),
      sub->add_option("--heads-kv", o.heads_kv, "KV heads per layer")->capture_default_str(),
      sub->add_option("--head-dim", o.head_dim, "head dimension d")->capture_default_str(),
      sub->add_option("--attention", o.attention,
                      "mha (K and V per KV head) or mla (one latent row of --kv-lora-rank + --rope-dim per token)")
          ->capture_default_str(),
      sub->add_option("--kv-lora-rank", o.kv_lora_rank, "MLA latent rank (--attention mla)")->capture_default_str(),
      sub->add_option("--rope-dim", o.rope_dim, "MLA rotary key columns (--attention mla)")->capture_default_str(),
      sub->add_option("--dtype", o.dtype, "K/V storage: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2")->capture_default_str(),
      sub->add_option("--layers", o.layers, "layers (their KV folds into heads)")->capture_default_str(),
      sub->add_option("--lengths", o.lengths, "fixed:N | uniform:LO..HI | zipf:mean=M[,s=S]")->capture_default_str(),
      sub->add_option("--max-seq-len", o.max_seq_lens, "comma-separated list")->delimiter(',')->capture_default_str(),
      sub->add_option("--page-size", o.page_sizes, "comma-separated list")->delimiter(',')->capture_default_str(),
      sub->add_option("--prefix", o.prefix, "shared prefix tokens per sequence (fork vs copy)")->capture_default_str(),
      sub->add_option("--seed", o.seed, "length sampler and page-order seed")->capture_default_str(),
      sub->add_option("--page-order", o.page_order, "sequential | shuffled | churned")->capture_default_str()};
  sub->add_option("--backend", o.backend, "host (simulation only), device, or auto (device too when a GPU is present)")
      ->capture_default_str();
  sub->add_option("--output", o.output, "write the rows as JSON to this file");
  sub->callback([&ctx, grid] {
    bool grid_given = false;
    o.grid_options_given = 0;
    for (const CLI::Option* opt : grid) {
      grid_given |= opt->count() > 0;
      o.grid_options_given += opt->count() > 0;
    }
    o.kv_shape_given = grid[1]->count() > 0 || grid[2]->count() > 0;  // --heads-kv, --head-dim
    try {
      ctx.exit_code = run_capacity(o, grid_given, grid[0]->count() > 0 /* --budget */, ctx);
    } catch (const UsageError& e) {
      std::cerr << "decode-bench: capacity: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
    } catch (const PoolError& e) {
      std::cerr << "decode-bench: capacity: " << e.what() << "\n";
      ctx.exit_code = e.kind() == PoolErrorKind::InvalidArgument ? kExitUsage : kExitRunFailed;
    }
  });
}

}  // namespace decode_bench::cli
