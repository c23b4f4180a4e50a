// SPDX-License-Identifier: Apache-2.0
#include "server/history/service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "server/history/alert_json.h"
#include "server/history/went_away.h"

namespace perfwarden::server::history {
std::string ParametersJson(const HistoryParams& params) {
  return nlohmann::ordered_json{{"algorithm", "e-divisive+binseg+confirm/2"},
                                {"threshold", params.detector.threshold},
                                {"window", params.detector.window},
                                {"max_pvalue", params.detector.max_pvalue},
                                {"rank_pvalue", params.detector.rank_pvalue},
                                {"serial_correction", params.detector.serial_correction},
                                {"mean_shift", params.detector.mean_shift},
                                {"mean_shift_penalty", params.detector.mean_shift_penalty},
                                {"clip_sigmas", params.detector.clip_sigmas},
                                {"level_points", params.detector.level_points},
                                {"min_segment", params.detector.min_segment},
                                {"ewma_lambda", params.ewma_lambda},
                                {"monitor_arl0", params.monitor_arl0},
                                {"monitor_warmup", params.monitor_warmup},
                                {"ci_resamples", params.ci_resamples},
                                {"ci_confidence", params.ci_confidence}}
      .dump();
}

namespace {

// The environment change of a new alert at an environment step: the fingerprints of the
// testbeds that measured the last good and the first bad point.
Result<void> FillEnvironmentChange(const store::HistoryRunWork& work,
                                   const store::HistorySeriesData& s, store::NewAlertRecord& a) {
  if (a.cause != "environment") return {};
  const auto at = static_cast<std::size_t>(a.position - s.baseline_from);
  const auto before = work.testbed_fingerprints.find(s.testbed_ids[at - 1]);
  const auto after = work.testbed_fingerprints.find(s.testbed_ids[at]);
  if (before == work.testbed_fingerprints.end() || after == work.testbed_fingerprints.end()) {
    return MakeError(ErrorCode::kInternal, "no fingerprint loaded for an environment change");
  }
  auto change = EnvironmentChangeJson(before->second, after->second);
  if (!change) return tl::unexpected(change.error());
  a.environment_change_json = std::move(*change);
  return {};
}

}  // namespace

Result<std::vector<store::HistorySeriesUpdate>> AnalyseRun(const store::HistoryRunWork& work,
                                                           const HistoryParams& params) {
  const std::string parameters = ParametersJson(params);
  std::vector<store::HistorySeriesUpdate> updates;
  std::vector<store::NewAlertRecord*> alerts;
  updates.reserve(work.series.size());
  for (const store::HistorySeriesData& s : work.series) {
    bool unreadable = false;
    const SeriesState state = ParseSeriesState(s, &unreadable);
    if (unreadable) {
      spdlog::warn("history: series {} has an unreadable state; analysing it from scratch",
                   s.key.id);
    }
    auto output = AnalyseSeries(s, params, state);
    if (!output) return tl::unexpected(output.error());
    WentAwayDecision gone = ApplyWentAway(s, *output, {params.detector.threshold});
    store::HistorySeriesUpdate& u = updates.emplace_back();
    u.went_away = std::move(gone.went_away);
    u.rebaseline_from = gone.rebaseline_from;
    u.series_id = s.key.id;
    u.detector_state_json = DetectorStateJson(output->detector_state, output->creep_scan);
    u.monitor_state_json = MonitorStateJson(output->monitors);
    for (const StepFound& found : output->steps) {
      u.steps.push_back({found.position, found.step.magnitude, found.step.p_value,
                         found.step.level_before, found.step.level_after, found.step.detectors});
    }
    u.alerts = std::move(output->alerts);
    for (store::NewAlertRecord& a : u.alerts) {
      a.parameters_json = parameters;
      if (auto filled = FillEnvironmentChange(work, s, a); !filled) {
        return tl::unexpected(filled.error());
      }
    }
    u.refreshed = std::move(output->refreshed);
    for (auto& [old_position, a] : u.refreshed) a.parameters_json = parameters;
  }
  // Benjamini-Hochberg across the series this run measured (reported, not a filter: each
  // alert already passed e-divisive's own significance level).
  std::vector<double> p_values;
  for (store::HistorySeriesUpdate& u : updates) {
    for (store::NewAlertRecord& a : u.alerts) {
      p_values.push_back(a.p_value);
      alerts.push_back(&a);
    }
  }
  const std::vector<double> q = QValues(p_values, work.series.size());
  for (std::size_t i = 0; i < alerts.size(); ++i) alerts[i]->q_value = std::clamp(q[i], 0.0, 1.0);
  return updates;
}

HistoryService::HistoryService(store::HistoryStore& store, HistoryServiceOptions options)
    : store_(store), options_(std::move(options)) {}

void HistoryService::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { Loop(); });
}

void HistoryService::Notify() {
  {
    std::lock_guard lock(mutex_);
    notified_ = true;
  }
  changed_.notify_one();
}

void HistoryService::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

HistoryService::Stats HistoryService::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

Result<bool> HistoryService::Step() {
  std::lock_guard step_lock(step_mutex_);
  // Claim, analyse, apply: a failed analysis ends the transaction uncommitted, so the run stays
  // pending with nothing appended.
  auto run = store_.BeginNextRun(options_.tracked_branches);
  if (!run) return tl::unexpected(run.error());
  if (*run == nullptr) return false;
  auto updates = AnalyseRun((*run)->Work(), options_.params);
  if (!updates) return tl::unexpected(updates.error());
  auto result = (*run)->Commit(*updates);
  if (!result) return tl::unexpected(result.error());
  std::size_t went_away = 0;
  for (const store::HistorySeriesUpdate& u : *updates) went_away += u.went_away.size();
  if (went_away > 0) {
    spdlog::info("history: run {} closed {} alert(s) as went away", result->run_id, went_away);
  }
  {
    std::lock_guard lock(mutex_);
    ++stats_.runs;
    stats_.alerts += static_cast<int64_t>(result->new_alert_ids.size());
  }
  if (!result->new_alert_ids.empty()) {
    spdlog::info("history: run {} raised {} alert(s) over {} series", result->run_id,
                 result->new_alert_ids.size(), result->series);
    Announce(*result);
  }
  return true;
}

Result<int> HistoryService::DrainNow() {
  int runs = 0;
  while (true) {
    auto step = Step();
    if (!step) return tl::unexpected(step.error());
    if (!*step) return runs;
    ++runs;
  }
}

void HistoryService::Loop() {
  std::chrono::milliseconds backoff = options_.first_backoff;
  int failures = 0;  // in a row, outages not counted
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
    }
    auto step = Step();
    if (step && *step) {
      backoff = options_.first_backoff;
      failures = 0;
      continue;  // more may be pending
    }
    std::chrono::milliseconds wait = options_.poll;
    if (!step) {
      {
        std::lock_guard lock(mutex_);
        ++stats_.errors;
      }
      if (step.error().code != ErrorCode::kUnavailable && ++failures >= options_.max_attempts) {
        // The same run failed again and again: a bug its data exposes, not an outage. Set it
        // aside rather than stop the project's history behind it.
        const std::string reason = step.error().message;
        auto skipped = store_.SkipNextRun(options_.tracked_branches, reason);
        if (skipped && *skipped) {
          spdlog::error(
              "history: run {} set aside after {} failed analyses ({}); its points "
              "are not in history (runs.history_error)",
              **skipped, failures, reason);
          std::lock_guard lock(mutex_);
          ++stats_.skipped;
        }
        failures = 0;
        backoff = options_.first_backoff;
        continue;
      }
      spdlog::warn("history: analysis failed ({}); retrying in {} ms", step.error().message,
                   backoff.count());
      wait = backoff;
      backoff = std::min(backoff * 2, std::chrono::milliseconds{30'000});
    }
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return stopped_ || notified_; });
    notified_ = false;
  }
}

void HistoryService::Announce(const store::HistoryRunResult& result) {
  if (options_.webhook_url.empty()) return;
  // One message per group this run created; alerts that joined an older group were announced
  // with it (GET .../alert-groups/{id} lists them).
  for (int64_t id : result.new_group_ids) {
    auto group = store_.GetAlertGroup(result.project, id);
    if (!group) {
      spdlog::warn("history: alert group {} not announced: {}", id, group.error().message);
      continue;
    }
    Post(GroupWebhookBody(*group, options_.public_url).dump());
  }
}

void HistoryService::Post(const std::string& body) {
  net::HttpClientOptions client_options;
  client_options.connect_timeout = std::chrono::milliseconds{5'000};
  client_options.total_timeout = std::chrono::milliseconds{15'000};
  auto http = net::HttpClient::Create(client_options);
  for (int attempt = 0; http && attempt < 3; ++attempt) {
    net::HttpRequest request;
    request.method = "POST";
    request.url = options_.webhook_url;
    request.body = body;
    request.content_type = "application/json";
    auto response = http->Send(request);
    if (response && response->status >= 200 && response->status < 300) return;
    spdlog::warn("history: webhook attempt {} failed: {}", attempt + 1,
                 response ? "HTTP " + std::to_string(response->status) : response.error().message);
    std::this_thread::sleep_for(std::chrono::milliseconds{500} * (attempt + 1));
  }
  std::lock_guard lock(mutex_);
  ++stats_.webhook_failures;
}

}  // namespace perfwarden::server::history
