// SPDX-License-Identifier: Apache-2.0
// Benchmarks of the statistics engine: `compare` of 1,000 benchmarks x 30 repetitions per
// side (Welch and U tests, bootstrap CI with 2,000 resamples, Holm), and its parts.
// --dump_data=FILE writes the generated samples as CSV, so that bench/scipy_baseline.py can
// time SciPy on exactly the same data (bench/run_stats_bench.sh does both).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/mann_whitney.h"
#include "stats/multiple_testing.h"
#include "stats/ttest.h"
#include "stats/verdict.h"

namespace {

using perfwarden::stats::Rng;

constexpr int kBenchmarks = 1000;
constexpr int kRepetitions = 30;

struct Data {
  std::vector<std::vector<double>> base;
  std::vector<std::vector<double>> contender;
  std::vector<perfwarden::stats::MetricInput> inputs;
};

double StandardNormal(Rng& rng) {
  for (;;) {
    double u1 = rng.Uniform();
    if (u1 <= 0) continue;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * rng.Uniform());
  }
}

// Log-normal timings (CV about 2%) around levels from 100 ns to 10 ms; every 50th benchmark
// regressed by 8%, every 70th improved by 6%.
const Data& GetData() {
  static const Data data = [] {
    Data d;
    Rng rng(20261122);
    for (int b = 0; b < kBenchmarks; ++b) {
      double level = 100 * std::pow(10.0, 5.0 * b / kBenchmarks);
      double shift = b % 50 == 0 ? 1.08 : (b % 70 == 0 ? 0.94 : 1.0);
      std::vector<double> base, contender;
      for (int r = 0; r < kRepetitions; ++r)
        base.push_back(level * std::exp(0.02 * StandardNormal(rng)));
      for (int r = 0; r < kRepetitions; ++r) {
        contender.push_back(level * shift * std::exp(0.02 * StandardNormal(rng)));
      }
      d.base.push_back(std::move(base));
      d.contender.push_back(std::move(contender));
    }
    for (int b = 0; b < kBenchmarks; ++b) {
      d.inputs.push_back({"BM_" + std::to_string(b), perfwarden::Direction::kLowerIsBetter,
                          d.base[b], d.contender[b], 0});
    }
    return d;
  }();
  return data;
}

void BM_Compare1000x30(benchmark::State& state) {
  const Data& d = GetData();
  perfwarden::stats::VerdictPolicy policy;  // U test, Holm, 2,000 resamples
  int regressions = 0;
  for (auto _ : state) {
    auto result = perfwarden::stats::JudgeMetrics(d.inputs, policy);
    regressions = result->regressions;
    benchmark::DoNotOptimize(result);
  }
  state.counters["regressions"] = regressions;
  state.counters["benchmarks"] = kBenchmarks;
}
BENCHMARK(BM_Compare1000x30)->Unit(benchmark::kMillisecond);

void BM_WelchOnly(benchmark::State& state) {
  const Data& d = GetData();
  for (auto _ : state) {
    for (int b = 0; b < kBenchmarks; ++b) {
      benchmark::DoNotOptimize(perfwarden::stats::WelchTTest(d.base[b], d.contender[b]));
    }
  }
}
BENCHMARK(BM_WelchOnly)->Unit(benchmark::kMillisecond);

void BM_UTestOnly(benchmark::State& state) {
  const Data& d = GetData();
  for (auto _ : state) {
    for (int b = 0; b < kBenchmarks; ++b) {
      benchmark::DoNotOptimize(perfwarden::stats::MannWhitneyU(d.base[b], d.contender[b]));
    }
  }
}
BENCHMARK(BM_UTestOnly)->Unit(benchmark::kMillisecond);

void BM_BootstrapOnly(benchmark::State& state) {
  const Data& d = GetData();
  for (auto _ : state) {
    for (int b = 0; b < kBenchmarks; ++b) {
      benchmark::DoNotOptimize(
          perfwarden::stats::BootstrapMedianChangeCi(d.base[b], d.contender[b], {2000, 0.95, 7}));
    }
  }
}
BENCHMARK(BM_BootstrapOnly)->Unit(benchmark::kMillisecond);

void BM_HolmOnly(benchmark::State& state) {
  Rng rng(3);
  std::vector<double> p;
  for (int b = 0; b < kBenchmarks; ++b) p.push_back(rng.Uniform());
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        perfwarden::stats::AdjustPValues(p, perfwarden::stats::Correction::kHolm));
  }
}
BENCHMARK(BM_HolmOnly)->Unit(benchmark::kMicrosecond);

bool DumpData(const char* path) {
  const Data& d = GetData();
  std::ofstream out(path);
  if (!out) return false;
  out.precision(17);
  for (int b = 0; b < kBenchmarks; ++b) {
    for (int side = 0; side < 2; ++side) {
      out << b << "," << (side == 0 ? "base" : "contender") << ",";
      const auto& v = side == 0 ? d.base[b] : d.contender[b];
      for (size_t i = 0; i < v.size(); ++i) out << (i ? " " : "") << v[i];
      out << "\n";
    }
  }
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--dump_data=", 12) == 0) {
      if (!DumpData(argv[i] + 12)) {
        std::fprintf(stderr, "stats_bench: cannot write %s\n", argv[i] + 12);
        return 2;
      }
      continue;
    }
    rest.push_back(argv[i]);
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
