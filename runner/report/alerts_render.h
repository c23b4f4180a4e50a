// SPDX-License-Identifier: Apache-2.0
// Renderings of perfwarden-server's alerts (GET/PATCH /api/v1/projects/{p}/alerts) for
// `perfwarden alerts`: pure, deterministic functions of the decoded answers (wire/alert.h; the
// decoder has refused mistyped fields, and an absent optional one prints as "-"). Text is for a
// terminal or a job log (control characters print as '?'); Markdown escapes every server string.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "wire/alert.h"

namespace perfwarden::report {

// "+8.1% [+7.2%, +9.0%]": the alert's signed relative change of level (magnitude) and its
// confidence interval; "+8.1%" without an interval (or with a bound that is not finite). A creep
// adds its range and slope: "+9.0% over points 61-119, +0.15%/point [+0.14%, +0.16%]".
std::string FormatAlertChange(const wire::Alert& alert);

// What the alert is: "creep" for a drift, else "environment" when its cause is "environment" (the
// testbed changed, not the code), else its kind ("regression", "improvement"); "-" when neither
// is given.
std::string AlertKindLabel(const wire::Alert& alert);

// The commit range an alert belongs to, as "<last_good 12 hex>..<first_bad 12 hex>"; the
// alert's group when given, else made from the range. A series' first point has no previous
// commit: "(first point)..<first_bad>".
std::string AlertRangeKey(const wire::Alert& alert);

// `perfwarden bisect --good <sha> --bad <sha> --benchmark <name> --metric <metric>` with full
// commit ids (names quoted for a POSIX shell when they need it); "" when the alert has no
// last good commit (nothing to bisect) or no first bad commit.
std::string BisectCommand(const wire::Alert& alert);

// `perfwarden alerts list`: the page (every page with --all). Alerts are grouped by commit range
// (AlertRangeKey), groups in order of their first alert (the server sends newest first), each
// under a heading with the range's commits and a table: id, state, kind (AlertKindLabel),
// testbed, suite/benchmark, metric, change with CI, p, q, detectors. A next cursor adds a line
// saying how to get the rest. "no alerts" when the list is empty.
std::string RenderAlertListText(const wire::AlertPage& page);
// The same as Markdown: a heading per commit range and a table under it.
std::string RenderAlertListMarkdown(const wire::AlertPage& page);

// `perfwarden alerts show`: one alert (GET .../alerts/{id}) with its series, change and CI,
// levels, p/q values, detectors, the commit range (short sha, subject, author), the environment
// change, the excerpt of points around the step (position, sha, level, repetitions; the first
// bad point marked ">"), its triage history, its bisects and the bisect command.
std::string RenderAlertText(const wire::AlertDetail& detail);
std::string RenderAlertMarkdown(const wire::AlertDetail& detail);

// `perfwarden alerts ack|resolve|false-positive|reopen`: one line for the updated alert
// (the PATCH answer): "alert 12 is now acknowledged: regression +8.1% [...] in ... (range)".
std::string RenderTriageText(const wire::Alert& alert);
// GET .../alert-summary as two lines: counts, and the triaged regressions' false positives.
std::string RenderAlertSummaryText(const wire::AlertSummary& summary);

// `perfwarden alerts groups`: a table of groups (id, state, range, branch, members, members by
// state, bisect, first bad commit's subject); "no alert groups" when empty.
std::string RenderAlertGroupListText(const wire::AlertGroupPage& page);
// `perfwarden alerts group ID`: the group's range and commits, members by state, the most
// significant member, its bisect (or the command that starts one) and a table of its members.
std::string RenderAlertGroupText(const wire::AlertGroupDetail& detail);
// The group triage verbs (--group): "alert group 3 is now closed (range): acknowledged 6".
std::string RenderGroupTriageText(const wire::AlertGroupDetail& detail);

// --format json: the answer pretty-printed (2 spaces, keys in byte order), ending in "\n".
std::string RenderJson(const nlohmann::json& value);
// A wire encoding (wire/alert.h's Encode*) the same way: its keys in byte order.
std::string RenderJson(const nlohmann::ordered_json& value);

}  // namespace perfwarden::report
