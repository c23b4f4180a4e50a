// SPDX-License-Identifier: Apache-2.0
// The attribution rules of docs/statistics.md ("Attribution"): what moved with a regression,
// the roofline class of a training step, one hint, and the environment note of throttled runs.
#include "judge/attribution.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "stats/descriptive.h"

namespace perfwarden::judge {
namespace {

// Whether no test could have found a change between samples of n and m values significant:
// fewer than 2 on a side (the verdict policy's first rule), or Mann-Whitney's smallest two-sided
// p, 2 / C(n + m, n), above 0.05 (1 value against fewer than 39, 3 against 3). GPU telemetry
// and a training run's summary metrics (tflops, mfu, peak_memory_bytes) have one value per run:
// for them the size of the change is all the evidence there is.
bool Undecidable(size_t n, size_t m) {
  if (n < 2 || m < 2) return true;
  double combinations = 1;  // C(n + m, n), built up until it is large enough to decide
  for (size_t i = 1; i <= n && combinations < 40; ++i) {
    combinations = combinations * static_cast<double>(m + i) / static_cast<double>(i);
  }
  return combinations < 40;
}

// +1 rose, -1 fell, 0 did not move as far as the verdict can tell.
int Movement(const AttributionInput& r) {
  if (!std::isfinite(r.change) || r.change == 0) return 0;
  if (r.verdict == "REGRESSION" || r.verdict == "IMPROVEMENT") return r.change > 0 ? 1 : -1;
  const bool unproven = r.verdict == "INCONCLUSIVE" || r.verdict == "IGNORED";
  if (!unproven || !r.base || !Undecidable(r.current.size(), r.base->size()) ||
      std::fabs(r.change) <= r.threshold) {
    return 0;
  }
  return r.change > 0 ? 1 : -1;
}

bool IsTime(const AttributionInput& r) {
  if (r.direction != Direction::kLowerIsBetter) return false;
  return r.metric == "step_time" || r.metric == "real_time" || r.metric == "cpu_time" ||
         r.unit == "ns" || r.unit == "us" || r.unit == "ms" || r.unit == "s";
}

bool IsTelemetry(std::string_view metric) { return metric.substr(0, 4) == "gpu_"; }

using Group = std::pair<std::string_view, std::string_view>;  // (suite, benchmark)
using Groups = std::map<Group, std::vector<size_t>>;

// A regression row and what can explain it: the other metrics of its benchmark, then the GPU
// telemetry of its suite (benchmark = suite name) when that is another benchmark.
class Neighbourhood {
 public:
  Neighbourhood(const std::vector<AttributionInput>& rows, const Groups& groups, size_t self)
      : rows_(rows), self_(rows[self]) {
    const Group own{self_.suite, self_.benchmark};
    for (size_t i : groups.at(own)) {
      if (i != self) others_.push_back(i);
    }
    if (self_.benchmark != self_.suite) {
      if (auto it = groups.find({self_.suite, self_.suite}); it != groups.end()) {
        for (size_t i : it->second) {
          if (IsTelemetry(rows_[i].metric)) others_.push_back(i);
        }
      }
    }
  }

  // The row of `metric`: the regression itself, else a neighbour; nullptr when absent.
  const AttributionInput* Find(std::string_view metric) const {
    if (self_.metric == metric) return &self_;
    for (size_t i : others_) {
      if (rows_[i].metric == metric) return &rows_[i];
    }
    return nullptr;
  }
  int Moved(std::string_view metric) const {
    const AttributionInput* r = Find(metric);
    return r != nullptr ? Movement(*r) : 0;
  }
  bool TimeRose() const {
    if (IsTime(self_) && Movement(self_) > 0) return true;
    return std::any_of(others_.begin(), others_.end(),
                       [&](size_t i) { return IsTime(rows_[i]) && Movement(rows_[i]) > 0; });
  }
  // The contender's median of `metric` in this benchmark or the suite's telemetry benchmark
  // (whatever the verdict: a NEW or IGNORED series still says what the run measured).
  std::optional<double> Value(std::string_view metric, const Groups& groups) const {
    for (const Group& g : {Group{self_.suite, self_.benchmark}, Group{self_.suite, self_.suite}}) {
      auto it = groups.find(g);
      if (it == groups.end()) continue;
      for (size_t i : it->second) {
        if (rows_[i].metric != metric) continue;
        const double median = stats::Median(rows_[i].current);
        if (std::isfinite(median) && median > 0) return median;
      }
    }
    return std::nullopt;
  }

  std::vector<MovedMetric> MovedMetrics() const {
    std::vector<const AttributionInput*> moved;
    for (size_t i : others_) {
      if (Movement(rows_[i]) != 0) moved.push_back(&rows_[i]);
    }
    auto p = [](const AttributionInput* r) {
      return std::isfinite(r->p_adjusted) ? r->p_adjusted : 2.0;
    };
    std::sort(moved.begin(), moved.end(),
              [&](const AttributionInput* a, const AttributionInput* b) {
                if (p(a) != p(b)) return p(a) < p(b);
                if (std::fabs(a->change) != std::fabs(b->change)) {
                  return std::fabs(a->change) > std::fabs(b->change);
                }
                return a->metric < b->metric;
              });
    std::vector<MovedMetric> out;
    for (const AttributionInput* r : moved) {
      out.push_back({std::string(r->metric), std::string(r->verdict), r->change});
    }
    return out;
  }

 private:
  const std::vector<AttributionInput>& rows_;
  const AttributionInput& self_;
  std::vector<size_t> others_;
};

bool GatedRegression(const AttributionInput& r) { return r.gated && r.verdict == "REGRESSION"; }

std::string_view Hint(const Neighbourhood& n, bool throttled) {
  if (n.Moved("gpu_sm_clock") < 0 || n.Moved("gpu_throttled_fraction") > 0 || throttled) {
    return kHintClock;
  }
  const int utilization = n.Moved("gpu_utilization");
  if (utilization < 0 && n.TimeRose()) return kHintStarved;
  // "As busy" needs the telemetry to say so: without it a slower step may as well be a GPU that
  // waited.
  const AttributionInput* busy = n.Find("gpu_utilization");
  if ((n.Moved("tflops") < 0 || n.Moved("mfu") < 0) && busy != nullptr &&
      std::isfinite(busy->change) && utilization >= 0) {
    return kHintSlowerKernels;
  }
  if (n.Moved("gpu_memory_peak") > 0 || n.Moved("peak_memory_bytes") > 0) return kHintMemory;
  const AttributionInput* real = n.Find("real_time");
  const AttributionInput* cpu = n.Find("cpu_time");
  if (real != nullptr && cpu != nullptr && Movement(*real) > 0) {
    if (Movement(*cpu) > 0) return kHintMoreWork;
    if (cpu->verdict == "EQUIVALENT") return kHintWaited;
  }
  return {};
}

std::optional<Roofline> RooflineOf(const Neighbourhood& n, const Groups& groups) {
  const auto flops = n.Value("flops_per_step", groups);
  const auto bytes = n.Value("bytes_per_step", groups);
  const auto peak_tflops = n.Value("peak_tflops", groups);
  const auto peak_bandwidth = n.Value("peak_bandwidth_gbs", groups);
  if (!flops || !bytes || !peak_tflops || !peak_bandwidth) return std::nullopt;
  Roofline r;
  r.intensity = *flops / *bytes;
  r.ridge = *peak_tflops * 1e12 / (*peak_bandwidth * 1e9);
  r.bound = r.intensity >= r.ridge ? kComputeBound : kMemoryBound;
  return r;
}

}  // namespace

Attributions Attribute(const std::vector<AttributionInput>& input) {
  Attributions out;
  out.rows.resize(input.size());
  // Most verdicts have no regression: they pay for nothing more.
  if (std::none_of(input.begin(), input.end(),
                   [](const AttributionInput& r) { return GatedRegression(r); })) {
    return out;
  }
  // An IGNORED series was not judged, so it has no change; telemetry that a rule keeps from
  // gating still explains, so its change is taken from the medians (when that is all the
  // evidence there could be anyway: few values).
  std::vector<AttributionInput> rows = input;
  for (AttributionInput& r : rows) {
    if (r.verdict != "IGNORED" || !r.base || !Undecidable(r.current.size(), r.base->size())) {
      continue;
    }
    const double base = stats::Median(*r.base);
    if (base != 0) r.change = stats::Median(r.current) / base - 1;
  }
  Groups groups;
  // Pooled contender runs: one throttled run is enough to spoil the pool.
  std::map<std::string_view, double> throttled;
  for (size_t i = 0; i < rows.size(); ++i) {
    groups[{rows[i].suite, rows[i].benchmark}].push_back(i);
    if (rows[i].metric == "gpu_throttled_fraction" && !rows[i].current.empty()) {
      const double most = *std::max_element(rows[i].current.begin(), rows[i].current.end());
      double& fraction = throttled[rows[i].suite];
      fraction = std::max(fraction, most);
    }
  }
  size_t regressions = 0, explained_by_host = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!GatedRegression(rows[i])) continue;
    ++regressions;
    const auto fraction = throttled.find(rows[i].suite);
    const bool host = fraction != throttled.end() && fraction->second > kThrottledFraction;
    if (host) {
      out.rows[i].environment = EnvironmentNote(fraction->second);
      ++explained_by_host;
    }
    const Neighbourhood n(rows, groups, i);
    Attribution a;
    a.moved = n.MovedMetrics();
    a.roofline = RooflineOf(n, groups);
    a.hint = std::string(Hint(n, host));
    if (!a.moved.empty() || a.roofline || !a.hint.empty()) out.rows[i].attribution = std::move(a);
  }
  out.noisy_environment = regressions > 0 && explained_by_host == regressions;
  return out;
}

std::string EnvironmentNote(double throttled_fraction) {
  return "the GPUs were throttled in " + std::to_string(std::lround(throttled_fraction * 100)) +
         "% of the samples (power or thermal caps): this run measures the host, not the code";
}

}  // namespace perfwarden::judge
