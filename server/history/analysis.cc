#include "server/history/analysis.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "stats/bootstrap.h"
#include "stats/multiple_testing.h"

namespace perfgate::server::history {
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
NewAlert MakeAlert(const SeriesInput& input, const HistoryParams& params,
                   const std::vector<stats::Step>& steps, std::size_t s,
                   const MonitorState& monitors) {
  const std::size_t n = input.levels.size();
  const stats::Step& step = steps[s];
  const int64_t position = input.baseline_from + static_cast<int64_t>(step.index);
  NewAlert alert;
  alert.position = position;
  alert.magnitude = step.magnitude;
  alert.regression = IsWorse(step.magnitude, input.direction);
  alert.p_value = step.p_value;
  alert.level_before = step.level_before;
  alert.level_after = step.level_after;
  alert.environment = input.testbed_ids[step.index] != input.testbed_ids[step.index - 1];
  // The CI compares the levels of the adjacent segments (to the neighbouring steps, at most
  // level_points each side): the same points the confirmation stage measured.
  const std::size_t lo = s == 0 ? 0 : steps[s - 1].index;
  const std::size_t hi = s + 1 == steps.size() ? n : steps[s + 1].index;
  const std::size_t cap = params.detector.level_points;
  const std::size_t from = std::max(lo, step.index > cap ? step.index - cap : 0);
  const std::size_t to = std::min(hi, step.index + cap);
  const std::span<const double> levels(input.levels);
  const stats::Interval ci = stats::BootstrapMedianChangeCi(
      levels.subspan(from, step.index - from), levels.subspan(step.index, to - step.index),
      {params.ci_resamples, params.ci_confidence, 0x5eed + static_cast<uint64_t>(position)});
  alert.ci_low = ci.lower;
  alert.ci_high = ci.upper;
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

json EwmaJson(const stats::EwmaParams& p, const stats::EwmaState& s) {
  return {{"mu0", p.mu0}, {"sigma", p.sigma}, {"lambda", p.lambda},
          {"L", p.L},     {"i", s.i},         {"z", s.z}};
}

json CusumJson(const stats::CusumParams& p, const stats::CusumState& s) {
  return {{"mu0", p.mu0}, {"sigma", p.sigma}, {"k", p.k},        {"h", p.h},
          {"i", s.i},     {"c_pos", s.c_pos}, {"c_neg", s.c_neg}};
}

}  // namespace

std::string MonitorStateJson(const MonitorState& m) {
  json out = {{"next_position", m.next_position},
              {"warmup", {{"n", m.warm_n}, {"mean", m.warm_mean}, {"m2", m.warm_m2}}},
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
    m.warm_mean = j.at("warmup").at("mean").get<double>();
    m.warm_m2 = j.at("warmup").at("m2").get<double>();
    m.armed = j.at("armed").get<bool>();
    const json& s = j.at("signals");
    m.ewma_up = s.at("ewma_up").get<int64_t>();
    m.ewma_down = s.at("ewma_down").get<int64_t>();
    m.cusum_up = s.at("cusum_up").get<int64_t>();
    m.cusum_down = s.at("cusum_down").get<int64_t>();
    if (m.armed) {
      const json& e = j.at("ewma");
      m.ewma_params = {e.at("mu0").get<double>(), e.at("sigma").get<double>(),
                       e.at("lambda").get<double>(), e.at("L").get<double>()};
      m.ewma = {e.at("i").get<int64_t>(), e.at("z").get<double>()};
      const json& c = j.at("cusum");
      m.cusum_params = {c.at("mu0").get<double>(), c.at("sigma").get<double>(),
                        c.at("k").get<double>(), c.at("h").get<double>()};
      m.cusum = {c.at("i").get<int64_t>(), c.at("c_pos").get<double>(),
                 c.at("c_neg").get<double>()};
    }
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable monitor state: ") + e.what(), "monitor_state");
  }
  return m;
}

std::string DetectorStateJson(const stats::ChangePointState& s) {
  return json{{"length", s.length},
              {"window_len", s.window_len},
              {"first_pass_pvalue", s.first_pass_pvalue},
              {"resume_start", s.resume_start},
              {"split_indices", s.split_indices}}
      .dump();
}

Result<std::optional<stats::ChangePointState>> ParseDetectorState(const std::string& text) {
  if (text.empty()) return std::optional<stats::ChangePointState>();
  try {
    const json j = json::parse(text);
    stats::ChangePointState s;
    s.length = j.at("length").get<std::size_t>();
    s.window_len = j.at("window_len").get<std::size_t>();
    s.first_pass_pvalue = j.at("first_pass_pvalue").get<double>();
    s.resume_start = j.at("resume_start").get<std::size_t>();
    s.split_indices = j.at("split_indices").get<std::vector<std::size_t>>();
    return std::optional<stats::ChangePointState>(std::move(s));
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable detector state: ") + e.what(), "detector_state");
  }
}

Result<SeriesOutput> AnalyseSeries(const SeriesInput& input, const HistoryParams& params) {
  const std::size_t n = input.levels.size();
  if (input.testbed_ids.size() != n) {
    return InvalidArgument("one testbed per level is required", "testbed_ids");
  }
  SeriesOutput out;
  // Monitors: the points not fed yet (a re-baselined series starts again at baseline_from).
  out.monitors = input.monitors;
  if (out.monitors.next_position < input.baseline_from) {
    out.monitors = MonitorState{};
    out.monitors.next_position = input.baseline_from;
  }
  for (int64_t p = out.monitors.next_position; p < input.baseline_from + static_cast<int64_t>(n);
       ++p) {
    Feed(out.monitors, input.levels[static_cast<std::size_t>(p - input.baseline_from)], p, params);
  }
  out.monitors.next_position = input.baseline_from + static_cast<int64_t>(n);

  const stats::ChangePointOptions options = stats::EDivisiveOptions(params.detector);
  auto incremental = stats::DetectChangePointsIncremental(
      input.levels, options, input.detector_state ? &*input.detector_state : nullptr);
  if (!incremental) return tl::unexpected(incremental.error());
  out.detector_state = std::move(incremental->state);
  const std::vector<stats::Step> steps =
      stats::ConfirmSteps(input.levels, incremental->analysis, params.detector);

  for (std::size_t s = 0; s < steps.size(); ++s) {
    const stats::Step& step = steps[s];
    const int64_t position = input.baseline_from + static_cast<int64_t>(step.index);
    out.steps.push_back({position, step});
    // The alert this step already has: the nearest within same_step_points.
    std::optional<int64_t> alerted;
    for (int64_t a : input.alerted_positions) {
      const int64_t distance = std::llabs(a - position);
      if (distance <= static_cast<int64_t>(params.same_step_points) &&
          (!alerted || distance < std::llabs(*alerted - position))) {
        alerted = a;
      }
    }
    const bool open =
        alerted && std::find(input.open_alert_positions.begin(), input.open_alert_positions.end(),
                             *alerted) != input.open_alert_positions.end();
    if (alerted && !open) continue;
    NewAlert alert = MakeAlert(input, params, steps, s, out.monitors);
    if (alerted) {
      out.refreshed.push_back({*alerted, std::move(alert)});
    } else {
      out.alerts.push_back(std::move(alert));
    }
  }
  return out;
}

std::vector<double> QValues(std::span<const double> p_values, std::size_t series_evaluated) {
  std::vector<double> all(p_values.begin(), p_values.end());
  all.resize(std::max(series_evaluated, all.size()), 1.0);
  std::vector<double> q = stats::AdjustPValues(all, stats::Correction::kBenjaminiHochberg);
  q.resize(p_values.size());
  return q;
}

}  // namespace perfgate::server::history
