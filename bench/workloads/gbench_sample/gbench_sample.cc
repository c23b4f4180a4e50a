// SPDX-License-Identifier: Apache-2.0
// The sample workload of perfwarden's demos and tests: four everyday kernels (sort, hash, matrix
// multiply, integer parsing), each at a few sizes, with fixed seeds. PERFWARDEN_SAMPLE_SLOWDOWN
// makes chosen benchmarks slower by an exact percentage, so a demo can show one regression
// among benchmarks that did not change. See README.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

constexpr uint64_t kSeed = 20240229;
constexpr double kMaxSlowdownPercent = 1000;

// ---- The slowdown knob ---------------------------------------------------------------------

struct SlowdownRule {
  std::string pattern;
  std::regex regex;
  double percent = 0;
  bool matched = false;
};

std::vector<SlowdownRule>& Rules() {
  static std::vector<SlowdownRule> rules;
  return rules;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Parses "REGEX=PERCENT[,REGEX=PERCENT...]"; returns an error message, empty on success.
std::string ParseSlowdown(std::string_view spec, std::vector<SlowdownRule>* rules) {
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view item = Trim(spec.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      if (spec.find_first_not_of(" \t") == std::string_view::npos) return {};  // unset
      return "empty item in \"" + std::string(spec) + "\"";
    }
    // The last '=' splits, so a regex may itself contain '='.
    const size_t equals = item.rfind('=');
    if (equals == std::string_view::npos) {
      return "\"" + std::string(item) + "\" has no '=' (expected REGEX=PERCENT)";
    }
    SlowdownRule rule;
    rule.pattern = std::string(Trim(item.substr(0, equals)));
    std::string_view percent = Trim(item.substr(equals + 1));
    if (rule.pattern.empty()) return "\"" + std::string(item) + "\" has an empty regex";
    if (!percent.empty() && percent.back() == '%') percent.remove_suffix(1);
    const char* end = percent.data() + percent.size();
    auto [ptr, ec] = std::from_chars(percent.data(), end, rule.percent);
    if (percent.empty() || ec != std::errc() || ptr != end || !(rule.percent >= 0) ||
        rule.percent > kMaxSlowdownPercent) {
      return "\"" + std::string(item) + "\": the percentage must be a number from 0 to " +
             std::to_string(static_cast<int>(kMaxSlowdownPercent));
    }
    try {
      rule.regex = std::regex(rule.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return "\"" + rule.pattern + "\" is not a valid regular expression (" + e.what() + ")";
    }
    rules->push_back(std::move(rule));
  }
  return {};
}

// The extra fraction of time for a benchmark instance: the first rule whose regex matches the
// whole name wins.
double SlowdownFraction(const std::string& name) {
  for (SlowdownRule& rule : Rules()) {
    if (std::regex_match(name, rule.regex)) {
      rule.matched = true;
      return rule.percent / 100.0;
    }
  }
  return 0;
}

// Runs the benchmark loop. With a slowdown, each iteration busy-waits for the given fraction of
// its own kernel time inside the timed region: spinning (not sleeping) keeps the CPU busy, so
// real_time and cpu_time both grow by the same percentage.
template <class Kernel>
void RunLoop(benchmark::State& state, const std::string& name, Kernel&& kernel) {
  const double extra = SlowdownFraction(name);
  if (extra <= 0) {
    // Exactly the loop of an unslowed build: no clock reads that could shift the timings.
    for (auto _ : state) kernel();
    return;
  }
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    kernel();
    const Clock::duration elapsed = Clock::now() - start;
    const Clock::time_point until =
        start + elapsed + std::chrono::duration_cast<Clock::duration>(elapsed * extra);
    while (Clock::now() < until) {
    }
  }
}

std::string InstanceName(const char* family, const benchmark::State& state) {
  return std::string(family) + "/" + std::to_string(state.range(0));
}

size_t Size(const benchmark::State& state) { return static_cast<size_t>(state.range(0)); }

// ---- Kernels ------------------------------------------------------------------------------

// std::sort of N random 32-bit integers; each iteration sorts a fresh copy of the same input.
void BM_Sort(benchmark::State& state) {
  const size_t n = Size(state);
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<int32_t> dist;
  std::vector<int32_t> input(n);
  for (int32_t& value : input) value = dist(rng);
  std::vector<int32_t> work(n);
  RunLoop(state, InstanceName("BM_Sort", state), [&] {
    std::copy(input.begin(), input.end(), work.begin());
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
    benchmark::ClobberMemory();
  });
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_Sort)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);

// 64-bit FNV-1a over a buffer of N random bytes (a byte-serial hash, as in hash tables keyed by
// short strings).
void BM_Hash(benchmark::State& state) {
  const size_t n = Size(state);
  std::mt19937_64 rng(kSeed + 1);
  std::vector<unsigned char> buffer(n);
  for (unsigned char& byte : buffer) byte = static_cast<unsigned char>(rng());
  RunLoop(state, InstanceName("BM_Hash", state), [&] {
    const unsigned char* data = buffer.data();
    benchmark::DoNotOptimize(data);  // the compiler must not hoist the hash out of the loop
    uint64_t hash = 14695981039346656037ULL;
    for (size_t i = 0; i < n; ++i) {
      hash ^= data[i];
      hash *= 1099511628211ULL;
    }
    benchmark::DoNotOptimize(hash);
  });
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_Hash)->Arg(1 << 14)->Arg(1 << 18)->Arg(1 << 22);

// C = A * B for N x N float matrices, in i-k-j order (unit stride in the inner loop, which the
// compiler vectorises). items_per_second is FLOP/s (2 N^3 per multiply).
void BM_MatMul(benchmark::State& state) {
  const size_t n = Size(state);
  std::mt19937_64 rng(kSeed + 2);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (float& value : a) value = dist(rng);
  for (float& value : b) value = dist(rng);
  RunLoop(state, InstanceName("BM_MatMul", state), [&] {
    std::fill(c.begin(), c.end(), 0.0f);
    for (size_t i = 0; i < n; ++i) {
      float* row = &c[i * n];
      for (size_t k = 0; k < n; ++k) {
        const float scale = a[i * n + k];
        const float* b_row = &b[k * n];
        for (size_t j = 0; j < n; ++j) row[j] += scale * b_row[j];
      }
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  });
  const auto flops = static_cast<int64_t>(2 * n * n * n);
  state.SetItemsProcessed(state.iterations() * flops);
}
BENCHMARK(BM_MatMul)->Arg(64)->Arg(128)->Arg(256);

// std::from_chars over "N comma-separated random integers", summing them.
void BM_ParseInts(benchmark::State& state) {
  const size_t n = Size(state);
  std::mt19937_64 rng(kSeed + 3);
  std::uniform_int_distribution<int32_t> dist(-1000000, 1000000);
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) text.push_back(',');
    text += std::to_string(dist(rng));
  }
  RunLoop(state, InstanceName("BM_ParseInts", state), [&] {
    const char* position = text.data();
    const char* const end = text.data() + text.size();
    int64_t sum = 0;
    while (position < end) {
      int32_t value = 0;
      const auto result = std::from_chars(position, end, value);
      sum += value;
      position = result.ptr + 1;  // skip the comma
    }
    benchmark::DoNotOptimize(sum);
  });
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseInts)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);

}  // namespace

int main(int argc, char** argv) {
  const char* spec = std::getenv("PERFWARDEN_SAMPLE_SLOWDOWN");
  if (spec != nullptr) {
    const std::string error = ParseSlowdown(spec, &Rules());
    if (!error.empty()) {
      std::cerr << "gbench_sample: bad PERFWARDEN_SAMPLE_SLOWDOWN: " << error << "\n"
                << "  expected REGEX=PERCENT[,REGEX=PERCENT...], e.g. \"BM_Sort/16384=10\"; "
                   "each REGEX must match a whole benchmark name\n";
      return 2;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!Rules().empty()) {
    // Recorded in the output's context, so a slowed result file says so itself.
    benchmark::AddCustomContext("perfwarden_sample_slowdown", spec);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const SlowdownRule& rule : Rules()) {
    if (!rule.matched) {
      std::cerr << "gbench_sample: warning: PERFWARDEN_SAMPLE_SLOWDOWN rule \"" << rule.pattern
                << "\" matched no benchmark that ran\n";
    }
  }
  return 0;
}
