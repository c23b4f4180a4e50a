// SPDX-License-Identifier: Apache-2.0
// The pull requests of bench/run_gate_trial.sh: six small Google Benchmark kernels that a
// throwaway repository builds from source, where a pull request's real code change (kExtraWork
// set from 0 to E) makes BM_Sum/16384 do 1/E more additions (E = 14: ~7% slower) and leaves the
// others as they were. Kept tiny so that a block of both sides takes about a second. Built with
// -DTRIAL_WIDE (run_gate_trial.sh --wide): 45 benchmarks, the six kernels at seven sizes each and
// three noisy ones whose work varies at random by 5-10% per repetition.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

// 0 in the baseline; a slowed pull request sets E: BM_Sum/16384 then adds n/E more elements.
constexpr int kExtraWork = 0;

std::vector<uint32_t> Input(size_t n) {
  std::mt19937 rng(20261126);
  std::vector<uint32_t> v(n);
  for (uint32_t& x : v) x = rng();
  return v;
}

void BM_Sum(benchmark::State& state) {
  const std::vector<uint32_t> v = Input(static_cast<size_t>(state.range(0)));
  const size_t extra = kExtraWork > 0 && v.size() == (1u << 14) ? v.size() / kExtraWork : 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (uint32_t x : v) {
      sum += x;
      benchmark::DoNotOptimize(sum);
    }
    for (size_t i = 0; i < extra; ++i) {
      sum += v[i];
      benchmark::DoNotOptimize(sum);
    }
  }
}
#ifdef TRIAL_WIDE
// Seven sizes of each kernel (the six of the small suite among them).
#define TRIAL_ARGS(base)  \
  ->Arg((base) / 4)       \
      ->Arg((base) / 2)   \
      ->Arg(base)         \
      ->Arg((base)*3 / 2) \
      ->Arg((base)*2)     \
      ->Arg((base)*3)     \
      ->Arg((base)*4)
#else
#define TRIAL_ARGS(base) ->Arg(base)
#endif

BENCHMARK(BM_Sum) TRIAL_ARGS(1 << 14);

void BM_Sort(benchmark::State& state) {
  const std::vector<uint32_t> input = Input(static_cast<size_t>(state.range(0)));
  std::vector<uint32_t> work(input.size());
  for (auto _ : state) {
    std::copy(input.begin(), input.end(), work.begin());
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
  }
}
BENCHMARK(BM_Sort) TRIAL_ARGS(1 << 11);

void BM_Hash(benchmark::State& state) {
  const std::vector<uint32_t> v = Input(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    benchmark::DoNotOptimize(h);
  }
}
BENCHMARK(BM_Hash) TRIAL_ARGS(1 << 14);

void BM_MatMul(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<double> a(n * n, 1.5), b(n * n, 0.5), c(n * n);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k)
        for (size_t j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
    benchmark::DoNotOptimize(c.data());
  }
}
BENCHMARK(BM_MatMul) TRIAL_ARGS(48);

void BM_Parse(benchmark::State& state) {
  std::string text;
  for (uint32_t x : Input(static_cast<size_t>(state.range(0)))) text += std::to_string(x) + ",";
  for (auto _ : state) {
    uint64_t total = 0, value = 0;
    for (char ch : text) {
      if (ch == ',') {
        total += value;
        value = 0;
      } else {
        value = value * 10 + static_cast<uint64_t>(ch - '0');
      }
    }
    benchmark::DoNotOptimize(total);
  }
}
BENCHMARK(BM_Parse) TRIAL_ARGS(1 << 11);

void BM_Map(benchmark::State& state) {
  const std::vector<uint32_t> keys = Input(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    std::map<uint32_t, uint32_t> m;
    for (uint32_t k : keys) m[k] = k;
    benchmark::DoNotOptimize(m.size());
  }
}
BENCHMARK(BM_Map) TRIAL_ARGS(1 << 9);

#ifdef TRIAL_WIDE
// Work that varies at random by +/-spread% per repetition (uniform: a CV of spread / sqrt(3)),
// as a benchmark whose input or environment varies from run to run: noise pairing cannot cancel.
void BM_Noisy(benchmark::State& state) {
  const std::vector<uint32_t> v = Input(1 << 13);
  std::mt19937 rng(std::random_device{}());
  const double spread = static_cast<double>(state.range(0)) / 100;
  const auto n =
      static_cast<size_t>(static_cast<double>(v.size()) *
                          std::uniform_real_distribution<double>(1 - spread, 1 + spread)(rng));
  for (auto _ : state) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += v[i % v.size()];
      benchmark::DoNotOptimize(sum);
    }
  }
}
BENCHMARK(BM_Noisy)->Arg(9)->Arg(13)->Arg(17);  // CV about 5%, 7.5% and 10%
#endif

}  // namespace

BENCHMARK_MAIN();
