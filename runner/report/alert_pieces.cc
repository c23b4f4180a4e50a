// SPDX-License-Identifier: Apache-2.0
// The alert pieces both renderings share, and the one-line summaries alerts_render.h exports
// (change, kind, range key, bisect command).
#include "runner/report/alert_pieces.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

#include "runner/report/alerts_render.h"
#include "runner/report/text_format.h"

namespace perfwarden::report {
namespace {

using alerts_internal::ShortSha;
using text::AnyText;
using text::Clean;
using text::Join;
using text::Md;
using text::MdCode;
using text::OrDash;
using text::Percent;

// Quoted for a POSIX shell when it holds anything but [A-Za-z0-9_@%+=:,./-].
std::string ShellWord(const std::string& word) {
  static constexpr std::string_view kSafe =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string::npos) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A fingerprint field's value as one short piece of text ("-" when the side lacks it); nested
// values print as JSON with their keys in byte order.
std::string FieldText(const nlohmann::ordered_json& fingerprint, const std::string& name) {
  if (!fingerprint.is_object()) return "-";
  const auto it = fingerprint.find(name);
  if (it == fingerprint.end()) return "-";
  return AnyText(nlohmann::json(*it));
}

}  // namespace

namespace alerts_internal {

std::string ShortSha(const std::string& sha, size_t n) {
  return sha.size() > n ? sha.substr(0, n) : sha;
}

std::string BenchmarkName(const wire::Alert& alert) {
  const SeriesKey& key = alert.series.key;
  if (key.suite.empty()) return OrDash(key.benchmark);
  return key.suite + "/" + OrDash(key.benchmark);
}

std::string CommitLine(const wire::CommitRef& commit, bool markdown) {
  if (commit.sha.empty()) return "";
  std::string out = markdown ? MdCode(ShortSha(commit.sha, 7)) : ShortSha(commit.sha, 7);
  if (!commit.subject.empty()) out += " " + (markdown ? Md(commit.subject) : Clean(commit.subject));
  std::vector<std::string> by;
  if (!commit.author.empty()) by.push_back(commit.author);
  if (commit.time && !commit.time->empty()) by.push_back(*commit.time);
  if (!by.empty()) {
    const std::string joined = Join(by, ", ");
    out += " (" + (markdown ? Md(joined) : Clean(joined)) + ")";
  }
  return out;
}

std::vector<std::string> EnvironmentLines(const wire::Alert& alert) {
  std::vector<std::string> lines;
  if (!alert.environment_change) return lines;
  const wire::EnvironmentChange& env = *alert.environment_change;
  for (const std::string& name : env.changed) {
    lines.push_back(name + ": " + FieldText(env.before, name) + " -> " +
                    FieldText(env.after, name));
  }
  if (lines.empty()) lines.push_back("the testbed's fingerprint changed");
  return lines;
}

}  // namespace alerts_internal

std::string FormatAlertChange(const wire::Alert& alert) {
  std::string out = Percent(alert.magnitude);
  if (alert.ci && std::isfinite(alert.ci->lower) && std::isfinite(alert.ci->upper)) {
    out += " [" + Percent(alert.ci->lower) + ", " + Percent(alert.ci->upper) + "]";
  }
  if (alert.creep) {  // a drift: its range and slope per point
    char slope[96];
    std::snprintf(slope, sizeof slope, "%+.2g%%/point [%+.2g%%, %+.2g%%]", alert.creep->slope * 100,
                  alert.creep->slope_low * 100, alert.creep->slope_high * 100);
    out += " over points " + std::to_string(alert.creep->start) + "-" +
           std::to_string(alert.creep->end) + ", " + slope;
  }
  return out;
}

std::string AlertKindLabel(const wire::Alert& alert) {
  if (alert.kind == "creep") return "creep";
  if (alert.cause == "environment") return "environment";
  return OrDash(Clean(alert.kind));
}

std::string AlertRangeKey(const wire::Alert& alert) {
  if (!alert.group.empty()) return Clean(alert.group);
  const std::string good = ShortSha(alert.range.last_good.sha, 12);
  const std::string bad = ShortSha(alert.range.first_bad.sha, 12);
  return Clean((good.empty() ? std::string("(first point)") : good) + ".." +
               (bad.empty() ? std::string("?") : bad));
}

std::string BisectCommand(const wire::Alert& alert) {
  const std::string& good = alert.range.last_good.sha;
  const std::string& bad = alert.range.first_bad.sha;
  if (good.empty() || bad.empty()) return "";
  const SeriesKey& key = alert.series.key;
  std::string out = "perfwarden bisect --good " + ShellWord(good) + " --bad " + ShellWord(bad);
  if (!key.benchmark.empty()) out += " --benchmark " + ShellWord(key.benchmark);
  if (!key.metric.empty()) out += " --metric " + ShellWord(key.metric);
  return Clean(out);
}

}  // namespace perfwarden::report
