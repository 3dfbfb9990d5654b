#pragma once
// A serving trace: requests with an arrival step and prompt and output lengths, drawn
// deterministically from a seed. Arrivals are Poisson at `rate` requests per decode step, or
// all at step 0. Lengths come from a named distribution:
//   fixed      every request `mean` tokens
//   uniform    integers in [lo, hi]
//   zipf       P(len = k) ~ k^-alpha on 1..N, N the smallest support whose mean reaches `mean`
//              (pools/length_distribution.hpp's)
//   lognormal  exp(N(mu, sigma^2)) rounded, mean `mean` (mu = ln(mean) - sigma^2 / 2), at least 1
// The trace is the scheduler's input (pools/trace_scheduler.hpp); one seed gives one trace.
#include <cstdint>
#include <string>
#include <vector>

namespace decode_bench {

struct TraceLengths {
  enum class Kind { fixed, uniform, zipf, lognormal };
  Kind kind = Kind::fixed;
  double mean = 128;       // fixed, zipf, lognormal
  std::int64_t lo = 1;     // uniform
  std::int64_t hi = 1;     // uniform
  double alpha = 1.1;      // zipf exponent
  double sigma = 0.5;      // lognormal: standard deviation of the log
  // Empty when valid, else the reason naming `what` (e.g. "prompt") and the field.
  std::string invalid_reason(const std::string& what) const;
  std::string describe() const;
};

enum class TraceArrival { poisson, all_at_once };

struct TraceSpec {
  int requests = 0;
  TraceArrival arrival = TraceArrival::all_at_once;
  double rate = 1;  // poisson: expected arrivals per decode step
  TraceLengths prompt, output;
  std::uint64_t seed = 0;
  // Shared system prompts: with system_prompt_len > 0 each request's prompt is one of
  // `system_prompts` system prompts (drawn uniformly, its own stream of the seed) of that many
  // tokens, followed by its own prompt_len tokens. 0: no system prompt (the trace as before).
  std::int64_t system_prompt_len = 0;
  int system_prompts = 1;
  std::string invalid_reason() const;
};

struct TraceRequest {
  int id = 0;                     // position in arrival order
  std::int64_t arrival_step = 0;  // the decode step at whose start it arrives
  std::int64_t prompt_len = 1;    // tokens in the pool when admitted (the system prompt's included)
  std::int64_t output_len = 1;    // decode steps until it finishes (one token each)
  int system_prompt = -1;         // which system prompt its prompt starts with; -1: none
  std::int64_t system_prompt_len = 0;  // its first tokens that are that system prompt
  friend bool operator==(const TraceRequest&, const TraceRequest&) = default;
};

// The trace of `spec`, in arrival order (arrival steps non-decreasing). Throws
// std::invalid_argument with invalid_reason() for an invalid spec.
std::vector<TraceRequest> make_trace(const TraceSpec& spec);

}  // namespace decode_bench
