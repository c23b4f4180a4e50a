// SPDX-License-Identifier: Apache-2.0
#include "server/history/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "server/history/creep_alerts.h"
#include "stats/bootstrap.h"
#include "stats/multiple_testing.h"

namespace perfwarden::server::history {
namespace {

using nlohmann::json;

// Feeds one level to the monitors; `position` is absolute.
void Feed(MonitorState& m, double x, int64_t position, const HistoryParams& params) {
  if (!std::isfinite(x)) return;
  if (!m.armed) {
    ++m.warm_n;
    const double delta = x - m.warm_mean;
    m.warm_mean += delta / static_cast<double>(m.warm_n);
    m.warm_m2 += delta * (x - m.warm_mean);
    if (m.warm_n < static_cast<int64_t>(std::max<std::size_t>(params.monitor_warmup, 2))) return;
    const double mu0 = m.warm_mean;
    const double sd = std::sqrt(m.warm_m2 / static_cast<double>(m.warm_n - 1));
    // A perfectly quiet warm-up must not make every later wiggle a signal.
    const double sigma = std::max({sd, 1e-3 * std::fabs(mu0), 1e-300});
    const double shift = params.detector.threshold * std::fabs(mu0) / sigma;
    const double k = std::clamp(shift / 2, 0.25, 3.0);
    m.ewma_params = {mu0, sigma, params.ewma_lambda,
                     stats::EwmaCriticalL(params.ewma_lambda, params.monitor_arl0)};
    m.cusum_params = {mu0, sigma, k, stats::CusumCriticalH(k, params.monitor_arl0)};
    m.ewma = {};
    m.cusum = {};
    m.armed = true;
    return;
  }
  stats::EwmaChart ewma(m.ewma_params, m.ewma);
  const stats::EwmaStep e = ewma.Update(x);
  m.ewma = ewma.state();
  if (e.signal) (e.z > m.ewma_params.mu0 ? m.ewma_up : m.ewma_down) = position;
  stats::TabularCusum cusum(m.cusum_params, m.cusum);
  const stats::CusumStep c = cusum.Update(x);
  m.cusum = cusum.state();
  if (c.signal_up) m.cusum_up = position;
  if (c.signal_down) m.cusum_down = position;
  // After a signal the sums restart, so that a second step can signal again.
  if (c.signal_up || c.signal_down) m.cusum.c_pos = m.cusum.c_neg = 0;
}

bool Near(int64_t signal, int64_t position, std::size_t points) {
  return signal >= 0 && signal >= position - static_cast<int64_t>(points);
}

// The alert for steps[s]: its figures, the CI over the points its levels were measured on,
// the fingerprint change, and the monitors that agree.
store::NewAlertRecord MakeAlert(const store::HistorySeriesData& series, const HistoryParams& params,
                                const std::vector<stats::Step>& steps, std::size_t s,
                                const MonitorState& monitors) {
  const stats::Step& step = steps[s];
  const int64_t position = series.baseline_from + static_cast<int64_t>(step.index);
  store::NewAlertRecord alert;
  alert.position = position;
  alert.magnitude = step.magnitude;
  alert.kind = IsWorse(step.magnitude, series.key.direction) ? "regression" : "improvement";
  alert.p_value = std::clamp(step.p_value, 0.0, 1.0);
  alert.level_before = step.level_before;
  alert.level_after = step.level_after;
  alert.cause =
      series.testbed_ids[step.index] != series.testbed_ids[step.index - 1] ? "environment" : "code";
  // The CI compares the points the confirmation stage measured the two levels on.
  const std::size_t from = step.first;
  const std::size_t to = step.last;
  const std::span<const double> levels(series.levels);
  const stats::Interval ci = stats::BootstrapMedianChangeCi(
      levels.subspan(from, step.index - from), levels.subspan(step.index, to - step.index),
      {params.ci_resamples, params.ci_confidence, 0x5eed + static_cast<uint64_t>(position)});
  // NaN when a side has a single point: no interval then.
  if (std::isfinite(ci.lower) && std::isfinite(ci.upper)) {
    alert.ci_low = ci.lower;
    alert.ci_high = ci.upper;
  }
  alert.detectors = step.detectors;
  const bool up = step.magnitude > 0;
  const std::size_t near = params.same_step_points;
  if (Near(up ? monitors.ewma_up : monitors.ewma_down, position, near)) {
    alert.detectors.push_back("ewma");
  }
  if (Near(up ? monitors.cusum_up : monitors.cusum_down, position, near)) {
    alert.detectors.push_back("cusum");
  }
  return alert;
}

// A state number as JSON: a number, or "inf", "-inf" or "nan" where JSON has none (values near
// the double's range overflow the monitors' sums; their state must still read back, or the
// series would be re-analysed from scratch at every run).
json Num(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

double ReadNum(const json& j) {
  if (j.is_string()) {
    const std::string& t = j.get_ref<const std::string&>();
    if (t == "inf") return HUGE_VAL;
    if (t == "-inf") return -HUGE_VAL;
    if (t == "nan") return NAN;
  }
  return j.get<double>();  // throws on anything else: the state is unreadable then
}

json EwmaJson(const stats::EwmaParams& p, const stats::EwmaState& s) {
  return {{"mu0", Num(p.mu0)}, {"sigma", Num(p.sigma)}, {"lambda", Num(p.lambda)}, {"L", Num(p.L)},
          {"i", s.i},          {"z", Num(s.z)}};
}

json CusumJson(const stats::CusumParams& p, const stats::CusumState& s) {
  return {{"mu0", Num(p.mu0)}, {"sigma", Num(p.sigma)}, {"k", Num(p.k)},        {"h", Num(p.h)},
          {"i", s.i},          {"c_pos", Num(s.c_pos)}, {"c_neg", Num(s.c_neg)}};
}

}  // namespace

std::string MonitorStateJson(const MonitorState& m) {
  json out = {{"next_position", m.next_position},
              {"warmup", {{"n", m.warm_n}, {"mean", Num(m.warm_mean)}, {"m2", Num(m.warm_m2)}}},
              {"armed", m.armed},
              {"signals",
               {{"ewma_up", m.ewma_up},
                {"ewma_down", m.ewma_down},
                {"cusum_up", m.cusum_up},
                {"cusum_down", m.cusum_down}}}};
  if (m.armed) {
    out["ewma"] = EwmaJson(m.ewma_params, m.ewma);
    out["cusum"] = CusumJson(m.cusum_params, m.cusum);
  }
  return out.dump();
}

Result<MonitorState> ParseMonitorState(const std::string& text) {
  MonitorState m;
  if (text.empty() || text == "{}") return m;
  try {
    const json j = json::parse(text);
    m.next_position = j.at("next_position").get<int64_t>();
    m.warm_n = j.at("warmup").at("n").get<int64_t>();
    m.warm_mean = ReadNum(j.at("warmup").at("mean"));
    m.warm_m2 = ReadNum(j.at("warmup").at("m2"));
    m.armed = j.at("armed").get<bool>();
    const json& s = j.at("signals");
    m.ewma_up = s.at("ewma_up").get<int64_t>();
    m.ewma_down = s.at("ewma_down").get<int64_t>();
    m.cusum_up = s.at("cusum_up").get<int64_t>();
    m.cusum_down = s.at("cusum_down").get<int64_t>();
    if (m.armed) {
      const json& e = j.at("ewma");
      m.ewma_params = {ReadNum(e.at("mu0")), ReadNum(e.at("sigma")), ReadNum(e.at("lambda")),
                       ReadNum(e.at("L"))};
      m.ewma = {e.at("i").get<int64_t>(), ReadNum(e.at("z"))};
      const json& c = j.at("cusum");
      m.cusum_params = {ReadNum(c.at("mu0")), ReadNum(c.at("sigma")), ReadNum(c.at("k")),
                        ReadNum(c.at("h"))};
      m.cusum = {c.at("i").get<int64_t>(), ReadNum(c.at("c_pos")), ReadNum(c.at("c_neg"))};
    }
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable monitor state: ") + e.what(), "monitor_state");
  }
  return m;
}

namespace {

// The detector's part and the creep search's part of a parsed detector state; json::exception
// for anything unreadable.
stats::ChangePointState DetectorFromJson(const json& j) {
  stats::ChangePointState s;
  s.length = j.at("length").get<std::size_t>();
  s.window_len = j.at("window_len").get<std::size_t>();
  s.first_pass_pvalue = ReadNum(j.at("first_pass_pvalue"));
  s.resume_start = j.at("resume_start").get<std::size_t>();
  s.split_indices = j.at("split_indices").get<std::vector<std::size_t>>();
  return s;
}

std::optional<stats::CreepScan> CreepFromJson(const json& j) {
  if (!j.is_object() || !j.contains("creep")) return std::nullopt;
  const json& c = j.at("creep");
  stats::CreepScan scan;
  scan.length = c.at("length").get<std::size_t>();
  scan.options.threshold = ReadNum(c.at("threshold"));
  scan.options.window = c.at("window").get<std::size_t>();
  scan.options.min_points = c.at("min_points").get<std::size_t>();
  scan.options.max_pvalue = ReadNum(c.at("max_pvalue"));
  scan.options.min_segment = c.at("min_segment").get<std::size_t>();
  scan.options.line_margin = ReadNum(c.at("line_margin"));
  scan.options.confidence = ReadNum(c.at("confidence"));
  for (const json& r : c.at("runs")) {
    scan.runs.push_back({r.at(0).get<std::size_t>(), r.at(1).get<std::size_t>(), r.at(2).get<int>(),
                         r.at(3).get<std::size_t>(), ReadNum(r.at(4))});
  }
  return scan;
}

}  // namespace

std::string DetectorStateJson(const stats::ChangePointState& s,
                              const std::optional<stats::CreepScan>& creep) {
  json out = {{"length", s.length},
              {"window_len", s.window_len},
              {"first_pass_pvalue", Num(s.first_pass_pvalue)},
              {"resume_start", s.resume_start},
              {"split_indices", s.split_indices}};
  if (creep) {
    const stats::CreepOptions& o = creep->options;
    json runs = json::array();
    for (const stats::CreepRun& r : creep->runs) {
      runs.push_back({r.start, r.end, r.sign, r.steepest, Num(r.steepest_slope)});
    }
    out["creep"] = {{"length", creep->length},
                    {"threshold", Num(o.threshold)},
                    {"window", o.window},
                    {"min_points", o.min_points},
                    {"max_pvalue", Num(o.max_pvalue)},
                    {"min_segment", o.min_segment},
                    {"line_margin", Num(o.line_margin)},
                    {"confidence", Num(o.confidence)},
                    {"runs", std::move(runs)}};
  }
  return out.dump();
}

Result<std::optional<stats::CreepScan>> ParseCreepScan(const std::string& text) {
  if (text.empty()) return std::optional<stats::CreepScan>();
  try {
    return CreepFromJson(json::parse(text));
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable creep state: ") + e.what(), "detector_state");
  }
}

Result<std::optional<stats::ChangePointState>> ParseDetectorState(const std::string& text) {
  if (text.empty()) return std::optional<stats::ChangePointState>();
  try {
    return std::optional<stats::ChangePointState>(DetectorFromJson(json::parse(text)));
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable detector state: ") + e.what(), "detector_state");
  }
}

SeriesState ParseSeriesState(const store::HistorySeriesData& series, bool* unreadable) {
  SeriesState state;
  // The detector's and the creep search's states share one document: parsed once, each part read
  // on its own (an unreadable part starts from scratch; the creep search's is read only with a
  // detector's).
  auto read = [](auto&& part) {
    try {
      part();
      return true;
    } catch (const json::exception&) {
      return false;
    }
  };
  bool detector_ok = true, creep_ok = true;
  if (!series.detector_state_json.empty()) {
    const json j = json::parse(series.detector_state_json, nullptr, /*allow_exceptions=*/false);
    detector_ok = !j.is_discarded() && read([&] { state.detector = DetectorFromJson(j); });
    creep_ok = !state.detector || read([&] { state.creep = CreepFromJson(j); });
  }
  auto monitors = ParseMonitorState(series.monitor_state_json);
  if (monitors) {
    state.monitors = *monitors;
  } else {
    state.monitors.next_position = series.baseline_from;
  }
  if (unreadable != nullptr) *unreadable = !detector_ok || !creep_ok || !monitors;
  return state;
}

Result<SeriesOutput> AnalyseSeries(const store::HistorySeriesData& series,
                                   const HistoryParams& params, const SeriesState& state) {
  const std::size_t n = series.levels.size();
  if (series.testbed_ids.size() != n) {
    return InvalidArgument("one testbed per level is required", "testbed_ids");
  }
  SeriesOutput out;
  // Monitors: the points not fed yet (a re-baselined series starts again at baseline_from).
  out.monitors = state.monitors;
  if (out.monitors.next_position < series.baseline_from) {
    out.monitors = MonitorState{};
    out.monitors.next_position = series.baseline_from;
  }
  for (int64_t p = out.monitors.next_position; p < series.baseline_from + static_cast<int64_t>(n);
       ++p) {
    Feed(out.monitors, series.levels[static_cast<std::size_t>(p - series.baseline_from)], p,
         params);
  }
  out.monitors.next_position = series.baseline_from + static_cast<int64_t>(n);

  const stats::ChangePointOptions options = stats::EDivisiveOptions(params.detector);
  auto incremental = stats::DetectChangePointsIncremental(
      series.levels, options, state.detector ? &*state.detector : nullptr);
  if (!incremental) return tl::unexpected(incremental.error());
  out.detector_state = std::move(incremental->state);
  const std::vector<stats::Step> steps =
      stats::ConfirmSteps(series.levels, incremental->analysis, params.detector);

  // Creeps first: the steps a drift was cut into raise its one creep alert instead of their own.
  auto creeps = FindCreepAlerts(series, params, steps, state.creep ? &*state.creep : nullptr);
  if (!creeps) return tl::unexpected(creeps.error());
  out.creep_scan = std::move(creeps->scan);
  out.alerts = std::move(creeps->alerts);
  out.refreshed = std::move(creeps->refreshed);

  for (std::size_t s = 0; s < steps.size(); ++s) {
    const stats::Step& step = steps[s];
    const int64_t position = series.baseline_from + static_cast<int64_t>(step.index);
    out.steps.push_back({position, step});
    if (std::count(creeps->replaced_steps.begin(), creeps->replaced_steps.end(), step.index) > 0) {
      continue;
    }
    const KnownAlert known = FindKnownAlert(series, position, params.same_step_points);
    if (known.position && known.open == nullptr) continue;  // triaged: kept as it was
    store::NewAlertRecord alert = MakeAlert(series, params, steps, s, out.monitors);
    if (known.position) {
      alert.q_value = RefreshedQValue(*known.open, alert.p_value);
      out.refreshed.emplace_back(*known.position, std::move(alert));
    } else {
      out.alerts.push_back(std::move(alert));
    }
  }
  return out;
}

KnownAlert FindKnownAlert(const store::HistorySeriesData& series, int64_t position,
                          std::size_t same_step_points) {
  KnownAlert known;
  for (int64_t a : series.alerted_positions) {
    const int64_t distance = std::llabs(a - position);
    if (distance <= static_cast<int64_t>(same_step_points) &&
        (!known.position || distance < std::llabs(*known.position - position))) {
      known.position = a;
    }
  }
  if (known.position) {
    for (const store::OpenAlertRecord& o : series.open_alerts) {
      if (o.position == *known.position) known.open = &o;
    }
  }
  return known;
}

double RefreshedQValue(const store::OpenAlertRecord& stored, double p_value) {
  if (!(stored.p_value > 0)) return stored.q_value;
  return std::min(1.0, p_value * (stored.q_value / stored.p_value));
}

Result<std::string> EnvironmentChangeJson(const std::string& before, const std::string& after) {
  json b, a;
  try {
    b = json::parse(before);
    a = json::parse(after);
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable fingerprint: ") + e.what(), "fingerprint");
  }
  if (!b.is_object() || !a.is_object()) {
    return InvalidArgument("a fingerprint must be a JSON object", "fingerprint");
  }
  std::set<std::string> keys;
  for (const auto& [key, value] : b.items()) keys.insert(key);
  for (const auto& [key, value] : a.items()) keys.insert(key);
  json changed = json::array();
  for (const std::string& key : keys) {
    const auto was = b.find(key);
    const auto is = a.find(key);
    if (was == b.end() || is == a.end() || *was != *is) changed.push_back(key);
  }
  // The fingerprints as stored (the database's canonical text): re-encoding them here could
  // change how a number is written.
  return "{\"before\": " + before + ", \"after\": " + after + ", \"changed\": " + changed.dump() +
         "}";
}

std::vector<double> QValues(std::span<const double> p_values, std::size_t series_evaluated) {
  std::vector<double> all(p_values.begin(), p_values.end());
  all.resize(std::max(series_evaluated, all.size()), 1.0);
  std::vector<double> q = stats::AdjustPValues(all, stats::Correction::kBenjaminiHochberg);
  q.resize(p_values.size());
  return q;
}

}  // namespace perfwarden::server::history
