// Renderings of perfgate-server's alerts (GET/PATCH /api/v1/projects/{p}/alerts) for
// `perfgate alerts`: pure, deterministic functions of the server's JSON, which they read
// defensively (a missing, null or mistyped field prints as "-" and never throws), so that a
// server adding or omitting an optional field cannot crash the runner. Text is for a terminal
// or a job log (control characters print as '?'); Markdown escapes every server string.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace perfgate::report {

// "+8.1% [+7.2%, +9.0%]": the alert's signed relative change of level ("magnitude") and its
// confidence interval ("ci"); "+8.1%" when ci is null or malformed; "-" without a magnitude.
std::string FormatAlertChange(const nlohmann::json& alert);

// What the alert is: "environment" when its cause is "environment" (the testbed changed, not
// the code), else its kind ("regression", "improvement"); "-" when neither is given.
std::string AlertKindLabel(const nlohmann::json& alert);

// The commit range an alert belongs to, as "<last_good 12 hex>..<first_bad 12 hex>"; the
// alert's "group" when given, else made from range.last_good / range.first_bad. A series'
// first point has no previous commit: "(first point)..<first_bad>".
std::string AlertRangeKey(const nlohmann::json& alert);

// `perfgate bisect --good <sha> --bad <sha> --benchmark <name> --metric <metric>` with full
// commit ids (names quoted for a POSIX shell when they need it); "" when the alert has no
// last good commit (nothing to bisect) or no first bad commit.
std::string BisectCommand(const nlohmann::json& alert);

// `perfgate alerts list`: `page` is the server's answer {"alerts": [...], "next_cursor": ...}.
// Alerts are grouped by commit range (AlertRangeKey), groups in order of their first alert
// (the server sends newest first), each under a heading with the range's commits and a table:
// id, state, kind (AlertKindLabel), testbed, suite/benchmark, metric, change with CI, p, q,
// detectors. A non-null next_cursor adds a line saying how to get the rest. "no alerts"
// when the list is empty.
std::string RenderAlertListText(const nlohmann::json& page);
// The same as Markdown: a heading per commit range and a table under it.
std::string RenderAlertListMarkdown(const nlohmann::json& page);

// `perfgate alerts show`: one alert (GET .../alerts/{id}) with its series, change and CI,
// levels, p/q values, detectors, the commit range (short sha, subject, author), the environment
// change, the excerpt of points around the step (position, sha, level, repetitions; the first
// bad point marked ">"), its triage history and the bisect command.
std::string RenderAlertText(const nlohmann::json& alert);
std::string RenderAlertMarkdown(const nlohmann::json& alert);

// `perfgate alerts ack|resolve|false-positive|reopen`: one line for the updated alert
// (the PATCH answer): "alert 12 is now acknowledged: regression +8.1% [...] in ... (range)".
// GET .../alert-summary as two lines: counts, and the triaged regressions' false positives.
std::string RenderAlertSummaryText(const nlohmann::json& summary);
std::string RenderTriageText(const nlohmann::json& alert);

// --format json: the server's JSON as it came, pretty-printed (2 spaces), ending in "\n".
std::string RenderJson(const nlohmann::json& value);

}  // namespace perfgate::report
