// SPDX-License-Identifier: Apache-2.0
// Alerts as the API and the webhook show them (docs/api.md, "Alerts"): the store's records mapped
// to the wire's alert messages (wire/alert.h encodes them) for GET .../alerts, GET .../alerts/{id}
// (with the series excerpt, triage history and bisects), GET .../alert-summary, PATCH, the alert
// groups (GET|PATCH .../alert-groups) and the webhook's message for a new group, with its
// Slack-compatible text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/store/history_store.h"
#include "wire/alert.h"

namespace perfwarden::server::history {

// "<last good sha[:12]>..<first bad sha[:12]>": alerts with the same range share it.
std::string RangeGroup(const store::AlertRecord& alert);

// A creep alert's "(+0.15% per point over points 60-120)" for the webhook's line; "" otherwise.
std::string CreepRange(const store::AlertRecord& alert);

wire::HistorySeries ToWire(const store::HistorySeriesKey& series);
// An unknown time or run id ("") is absent.
wire::CommitRef ToWire(const store::CommitRef& commit);
// The confidence is the stored parameters' ci_confidence (0.95 without one); the interval is
// absent unless both bounds are finite; an unreadable stored environment change is absent.
wire::Alert ToWire(const store::AlertRecord& alert);
// The excerpt's first bad point is the alert's position; a point's testbed fingerprint changed
// when its testbed differs from the point before.
wire::AlertDetail ToWire(const store::AlertDetail& detail);

// Counts by state, kind and cause, and the triage outcomes as quality figures:
// false_positive_rate = false positives / triaged (acknowledged + false_positive + resolved)
// among regressions with a code cause, absent when none was triaged.
wire::AlertSummary SummaryOf(const std::vector<store::AlertCount>& counts);

// A group's member counts in kAlertStates' order (zeros included); its range's commits have no
// run id.
wire::AlertGroup ToWire(const store::AlertGroupRecord& group);
wire::AlertGroupDetail ToWire(const store::AlertGroupDetail& detail);

// The webhook body announcing a new alert group: {"text": ..., "group": the group, "alerts":
// [its members]}; `text` names the group, its range and branch, and has a line per member (most
// significant first; a creep's line says "creep", its total change and CreepRange), with links
// under `public_url` when it is set.
nlohmann::ordered_json GroupWebhookBody(const store::AlertGroupDetail& group,
                                        const std::string& public_url);

}  // namespace perfwarden::server::history
