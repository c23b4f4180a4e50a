// Alerts as the API and the webhook show them (docs/api.md, "Alerts"): one JSON shape for
// GET .../alerts, GET .../alerts/{id} (with the series excerpt and triage history), PATCH, and
// the webhook, plus the Slack-compatible one-line-per-alert text of a webhook message.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/store/history_store.h"

namespace perfgate::server::history {

// "<last good sha[:12]>..<first bad sha[:12]>": alerts with the same range share it.
std::string RangeGroup(const store::AlertRecord& alert);

// A commit of a range: {"sha", "subject", "author", "time", "run_id"} (null when unknown).
nlohmann::ordered_json CommitJson(const store::CommitRef& commit);

nlohmann::ordered_json AlertJson(const store::AlertRecord& alert);
// AlertJson plus "excerpt", "history" and "bisects" (newest first, without their reports).
nlohmann::ordered_json AlertDetailJson(const store::AlertDetail& detail);

// Counts by state, kind and cause, and the triage outcomes as quality figures:
// false_positive_rate = false positives / triaged (acknowledged + false_positive + resolved)
// among regressions with a code cause, null when none was triaged.
nlohmann::ordered_json AlertSummaryJson(const std::vector<store::AlertCount>& counts);

// The webhook body for alerts raised by one run: {"text": ..., "alerts": [...]}; `text` (what
// Slack, Mattermost and Teams incoming webhooks display) has a line per alert, grouped by commit
// range, with links under `public_url` when it is set.
nlohmann::ordered_json WebhookBody(const std::vector<store::AlertRecord>& alerts,
                                   const std::string& public_url);

}  // namespace perfgate::server::history
