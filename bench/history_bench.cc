// SPDX-License-Identifier: Apache-2.0
// Benchmarks of the history analysis: perfwarden's detector (e-divisive, then the
// confirmation stage) on a whole series from scratch against one append resumed from the state
// left by the previous run, at 1,000 / 10,000 / 100,000 points; the server's per-series
// analysis (server::history::AnalyseSeries) for one new point with and without persisted state;
// and 10,000 series of 200 points (a full analysis of each, one append to each).
// Every benchmark checks its result outside the timed loop against the full analysis and aborts
// on a mismatch, so a fast figure cannot come from computing something else.
// bench/run_history_bench.sh runs it with repetitions; the figures go to docs/performance.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "server/history/analysis.h"
#include "stats/bootstrap.h"
#include "stats/change_points.h"
#include "stats/history_detector.h"
#include "stats/monitors.h"

namespace {

using perfwarden::stats::ChangePointAnalysis;
using perfwarden::stats::ChangePointOptions;
using perfwarden::stats::ChangePointState;
using perfwarden::stats::HistoryOptions;
using perfwarden::stats::Rng;
using perfwarden::stats::Step;
namespace history = perfwarden::server::history;
namespace store = perfwarden::store;

constexpr std::size_t kManySeries = 10000;
constexpr std::size_t kManyPoints = 200;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "history_bench: check failed: %s\n", what);
  std::abort();
}

template <typename T>
T Check(perfwarden::Result<T> result, const char* what) {
  if (!result) Fail(what);
  return std::move(*result);
}

double StandardNormal(Rng& rng) {
  for (;;) {
    double u1 = rng.Uniform();
    if (u1 <= 0) continue;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * rng.Uniform());
  }
}

// Per-commit levels: log-normal noise (CV about 2%) around a base level, with a step every
// 2,500 points alternating +8% / -6% (4 steps in 10,000 points). A short series (< 2,500) gets
// one +10% step at 60% of its length when `seed` is a multiple of 3.
std::vector<double> MakeSeries(std::size_t n, uint64_t seed) {
  Rng rng(0x5e1e5 + seed);
  double level = 1000.0 * (1 + static_cast<double>(seed % 17));
  std::vector<double> out;
  out.reserve(n);
  bool up = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (n >= 2500 && i % 2500 == 1250) {
      level *= up ? 1.08 : 0.94;
      up = !up;
    }
    if (n < 2500 && seed % 3 == 0 && i == n * 3 / 5) level *= 1.10;
    out.push_back(level * std::exp(0.02 * StandardNormal(rng)));
  }
  return out;
}

const HistoryOptions kHistory;  // perfwarden's defaults: window 100, p 1e-4, threshold 5%

ChangePointOptions Options() { return perfwarden::stats::EDivisiveOptions(kHistory); }

std::vector<std::size_t> Indices(const ChangePointAnalysis& analysis) {
  std::vector<std::size_t> out;
  for (const auto& cp : analysis.change_points) out.push_back(cp.index);
  return out;
}

// The reference for one series: the full e-divisive analysis and the confirmed steps.
struct Reference {
  std::vector<std::size_t> change_points;
  std::vector<Step> steps;
};

Reference Full(std::span<const double> series) {
  const ChangePointAnalysis analysis =
      Check(perfwarden::stats::DetectChangePoints(series, Options()), "DetectChangePoints");
  return {Indices(analysis), perfwarden::stats::ConfirmSteps(series, analysis, kHistory)};
}

// A long series, its reference analysis, and the state left by the analysis of all but its
// last point (what the server persisted after the previous run).
struct Fixture {
  std::vector<double> series;
  Reference reference;
  ChangePointState state;
};

const Fixture& GetFixture(std::size_t n) {
  static std::map<std::size_t, Fixture> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  Fixture f;
  f.series = MakeSeries(n, 3 * (n / 1000));  // a multiple of 3: 1,000 points get a step
  f.reference = Full(f.series);
  const auto& prefix =
      Check(perfwarden::stats::DetectChangePointsIncremental(
                std::span<const double>(f.series).first(n - 1), Options(), nullptr),
            "prefix analysis");
  f.state = prefix.state;
  if (f.state.length != n - 1) Fail("prefix state length");
  return cache.emplace(n, std::move(f)).first->second;
}

// Both stages from scratch (stats::DetectSteps), as `perfwarden analyze` or a lost state does.
void BM_FullDetection(benchmark::State& state) {
  const Fixture& f = GetFixture(static_cast<std::size_t>(state.range(0)));
  std::vector<Step> steps;
  for (auto _ : state) {
    steps = Check(perfwarden::stats::DetectSteps(f.series, kHistory), "DetectSteps");
    benchmark::DoNotOptimize(steps.data());
  }
  if (steps != f.reference.steps) Fail("DetectSteps differs from the reference");
  state.counters["points"] = static_cast<double>(f.series.size());
  state.counters["change_points"] = static_cast<double>(f.reference.change_points.size());
  state.counters["steps"] = static_cast<double>(steps.size());
}
BENCHMARK(BM_FullDetection)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// One append: e-divisive resumed from the state of the (n-1)-point prefix, then the
// confirmation stage on the whole series.
void BM_IncrementalAppend(benchmark::State& state) {
  const Fixture& f = GetFixture(static_cast<std::size_t>(state.range(0)));
  const ChangePointOptions options = Options();
  std::vector<std::size_t> change_points;
  std::vector<Step> steps;
  ChangePointAnalysis last;
  bool resumed = true;
  for (auto _ : state) {
    auto result = perfwarden::stats::DetectChangePointsIncremental(f.series, options, &f.state);
    if (!result) Fail("DetectChangePointsIncremental");
    steps = perfwarden::stats::ConfirmSteps(f.series, result->analysis, kHistory);
    resumed = resumed && result->resumed;
    benchmark::DoNotOptimize(steps.data());
    last = std::move(result->analysis);
  }
  change_points = Indices(last);
  if (!resumed) Fail("the incremental analysis did not resume from the state");
  if (change_points != f.reference.change_points) Fail("incremental change points differ");
  if (steps != f.reference.steps) Fail("incremental steps differ");
  state.counters["points"] = static_cast<double>(f.series.size());
  state.counters["resume_start"] = static_cast<double>(f.state.resume_start);
}
BENCHMARK(BM_IncrementalAppend)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

// The server's path without a state (a lost or re-baselined state): the incremental entry point
// given no state, then the confirmation stage.
void BM_IncrementalNoState(benchmark::State& state) {
  const Fixture& f = GetFixture(static_cast<std::size_t>(state.range(0)));
  const ChangePointOptions options = Options();
  std::vector<Step> steps;
  for (auto _ : state) {
    auto result = perfwarden::stats::DetectChangePointsIncremental(f.series, options, nullptr);
    if (!result || result->resumed) Fail("DetectChangePointsIncremental without a state");
    steps = perfwarden::stats::ConfirmSteps(f.series, result->analysis, kHistory);
    benchmark::DoNotOptimize(steps.data());
  }
  if (steps != f.reference.steps) Fail("steps without a state differ");
}
BENCHMARK(BM_IncrementalNoState)->Arg(10000)->Unit(benchmark::kMillisecond);

// Only the e-divisive part of one append (no confirmation stage), to split the cost.
void BM_IncrementalAppendEDivisiveOnly(benchmark::State& state) {
  const Fixture& f = GetFixture(static_cast<std::size_t>(state.range(0)));
  const ChangePointOptions options = Options();
  std::vector<std::size_t> change_points;
  ChangePointAnalysis last;
  for (auto _ : state) {
    auto result = perfwarden::stats::DetectChangePointsIncremental(f.series, options, &f.state);
    if (!result || !result->resumed) Fail("DetectChangePointsIncremental");
    benchmark::DoNotOptimize(result->analysis.change_points.data());
    last = std::move(result->analysis);
  }
  change_points = Indices(last);
  if (change_points != f.reference.change_points) Fail("incremental change points differ");
}
BENCHMARK(BM_IncrementalAppendEDivisiveOnly)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMicrosecond);

// The server's per-series analysis of one ingested run (monitors, e-divisive, confirmation,
// alerts) on a 10,000-point series whose earlier steps are already alerted.
struct ServerFixture {
  store::HistorySeriesData series;
  history::SeriesState with_state;  // the state persisted after the first 9,999 points
  history::SeriesState scratch;     // no detector state, fresh monitors (a re-analysis)
  history::HistoryParams params;
  std::vector<int64_t> reference_positions;
};

std::vector<int64_t> Positions(const history::SeriesOutput& out) {
  std::vector<int64_t> positions;
  for (const auto& s : out.steps) positions.push_back(s.position);
  return positions;
}

store::HistorySeriesData Input(std::span<const double> levels) {
  store::HistorySeriesData in;
  in.levels.assign(levels.begin(), levels.end());
  in.testbed_ids.assign(levels.size(), 1);
  return in;
}

const ServerFixture& GetServerFixture(std::size_t n) {
  static std::map<std::size_t, ServerFixture> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  ServerFixture f;
  const Fixture& base = GetFixture(n);
  f.params.detector = kHistory;
  const history::SeriesOutput prefix = Check(
      history::AnalyseSeries(Input(std::span<const double>(base.series).first(n - 1)), f.params),
      "AnalyseSeries on the prefix");
  f.series = Input(base.series);
  f.series.alerted_positions = Positions(prefix);
  f.with_state.detector = prefix.detector_state;
  f.with_state.creep = prefix.creep_scan;
  f.with_state.monitors = prefix.monitors;
  for (const auto& s : base.reference.steps) {
    f.reference_positions.push_back(static_cast<int64_t>(s.index));
  }
  return cache.emplace(n, std::move(f)).first->second;
}

void RunAnalyseSeries(benchmark::State& state, bool with_state) {
  const ServerFixture& f = GetServerFixture(static_cast<std::size_t>(state.range(0)));
  const history::SeriesState& from = with_state ? f.with_state : f.scratch;
  history::SeriesOutput last;
  for (auto _ : state) {
    auto out = history::AnalyseSeries(f.series, f.params, from);
    if (!out) Fail("AnalyseSeries");
    benchmark::DoNotOptimize(out->steps.data());
    last = std::move(*out);
  }
  const std::vector<int64_t> positions = Positions(last);
  const std::size_t alerts = last.alerts.size();
  if (positions != f.reference_positions) Fail("AnalyseSeries steps differ from the reference");
  state.counters["points"] = static_cast<double>(f.series.levels.size());
  state.counters["new_alerts"] = static_cast<double>(alerts);
}

void BM_AnalyseSeries_Append(benchmark::State& state) { RunAnalyseSeries(state, true); }
void BM_AnalyseSeries_Scratch(benchmark::State& state) { RunAnalyseSeries(state, false); }
BENCHMARK(BM_AnalyseSeries_Append)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AnalyseSeries_Scratch)->Arg(10000)->Unit(benchmark::kMillisecond);

// What arming the monitors costs once per series without a monitor state: the EWMA's L and
// CUSUM's h for the in-control ARL (as AnalyseSeries' warm-up does, k for a 5% shift at CV 2%).
void BM_MonitorArming(benchmark::State& state) {
  const history::HistoryParams params;
  double sum = 0;
  for (auto _ : state) {
    sum = perfwarden::stats::EwmaCriticalL(params.ewma_lambda, params.monitor_arl0) +
          perfwarden::stats::CusumCriticalH(1.25, params.monitor_arl0);
    benchmark::DoNotOptimize(sum);
  }
  if (!std::isfinite(sum) || sum <= 0) Fail("monitor critical values");
}
BENCHMARK(BM_MonitorArming)->Unit(benchmark::kMillisecond);

// 10,000 series of 200 points, with the states of their 199-point prefixes.
struct Many {
  std::vector<std::vector<double>> series;
  std::vector<ChangePointState> states;
  std::vector<Reference> references;
  std::size_t total_steps = 0;
  double mean_resume_start = 0;  // where the append's split step resumes, on average
};

const Many& GetMany() {
  static const Many many = [] {
    Many m;
    for (std::size_t s = 0; s < kManySeries; ++s) {
      m.series.push_back(MakeSeries(kManyPoints, s));
      const std::span<const double> x(m.series.back());
      m.references.push_back(Full(x));
      m.total_steps += m.references.back().steps.size();
      m.states.push_back(Check(perfwarden::stats::DetectChangePointsIncremental(
                                   x.first(kManyPoints - 1), Options(), nullptr),
                               "prefix analysis")
                             .state);
      m.mean_resume_start += static_cast<double>(m.states.back().resume_start) / kManySeries;
    }
    return m;
  }();
  return many;
}

void ManyCounters(benchmark::State& state, std::size_t steps) {
  state.counters["series"] = kManySeries;
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["series/s"] = benchmark::Counter(static_cast<double>(kManySeries),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  state.counters["per_series"] = benchmark::Counter(
      static_cast<double>(kManySeries),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// (a) Both stages on every series from scratch.
void BM_ManySeries_Full(benchmark::State& state) {
  const Many& m = GetMany();
  std::size_t steps = 0;
  for (auto _ : state) {
    steps = 0;
    for (std::size_t s = 0; s < kManySeries; ++s) {
      const auto found =
          Check(perfwarden::stats::DetectSteps(m.series[s], kHistory), "DetectSteps");
      steps += found.size();
      benchmark::DoNotOptimize(found.data());
    }
  }
  if (steps != m.total_steps) Fail("many series: full step count differs");
  ManyCounters(state, steps);
}
BENCHMARK(BM_ManySeries_Full)->Unit(benchmark::kMillisecond);

// (b) One append to each series, resumed from its state (a run that touched 10,000 series).
void BM_ManySeries_Append(benchmark::State& state) {
  const Many& m = GetMany();
  const ChangePointOptions options = Options();
  std::size_t steps = 0;
  bool all_match = true;
  for (auto _ : state) {
    steps = 0;
    for (std::size_t s = 0; s < kManySeries; ++s) {
      auto result =
          perfwarden::stats::DetectChangePointsIncremental(m.series[s], options, &m.states[s]);
      if (!result || !result->resumed) Fail("DetectChangePointsIncremental");
      const std::vector<Step> found =
          perfwarden::stats::ConfirmSteps(m.series[s], result->analysis, kHistory);
      steps += found.size();
      all_match = all_match && found == m.references[s].steps;
      benchmark::DoNotOptimize(found.data());
    }
  }
  if (!all_match || steps != m.total_steps) Fail("many series: incremental steps differ");
  ManyCounters(state, steps);
  state.counters["mean_resume_start"] = m.mean_resume_start;
}
BENCHMARK(BM_ManySeries_Append)->Unit(benchmark::kMillisecond);

// (c) The server's AnalyseSeries for one new point of each series, with its persisted state;
// argument 0: the state without the creep search's (how it was before the server kept it: every
// window of the 240-point tail judged again at each analysis).
void BM_ManySeries_AnalyseAppend(benchmark::State& state) {
  struct Appended {
    store::HistorySeriesData series;
    history::SeriesState state;
  };
  static const std::vector<Appended> inputs = [] {
    const Many& m = GetMany();
    const history::HistoryParams params;
    std::vector<Appended> out;
    for (std::size_t s = 0; s < kManySeries; ++s) {
      const std::span<const double> x(m.series[s]);
      const history::SeriesOutput prefix =
          Check(history::AnalyseSeries(Input(x.first(kManyPoints - 1)), params), "AnalyseSeries");
      Appended in{Input(x), {prefix.detector_state, prefix.creep_scan, prefix.monitors}};
      in.series.alerted_positions = Positions(prefix);
      out.push_back(std::move(in));
    }
    return out;
  }();
  const Many& m = GetMany();
  history::HistoryParams params;
  params.detector = kHistory;
  const bool keep_creep = state.range(0) != 0;
  std::vector<history::SeriesState> states;
  for (const Appended& in : inputs) {
    states.push_back(in.state);
    if (!keep_creep) states.back().creep.reset();
  }
  std::size_t steps = 0;
  bool all_match = true;
  for (auto _ : state) {
    steps = 0;
    for (std::size_t s = 0; s < kManySeries; ++s) {
      auto out = history::AnalyseSeries(inputs[s].series, params, states[s]);
      if (!out) Fail("AnalyseSeries");
      steps += out->steps.size();
      all_match = all_match && out->steps.size() == m.references[s].steps.size();
      benchmark::DoNotOptimize(out->steps.data());
    }
  }
  if (!all_match || steps != m.total_steps) Fail("many series: AnalyseSeries steps differ");
  ManyCounters(state, steps);
}
BENCHMARK(BM_ManySeries_AnalyseAppend)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
