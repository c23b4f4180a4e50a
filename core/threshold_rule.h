// SPDX-License-Identifier: Apache-2.0
// Threshold rules: perfwarden.yaml's `thresholds`, sent by the gate as the verdict request's
// `rules` and stored with the verdict (a plain value: the JSON is wire/verdict_request.h). The
// first rule whose globs match a series decides its threshold and alpha, or leaves it out of the
// judgement (ignore). Also the parser of a threshold given on a command line or in a query ("5%" or
// "0.05").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"

namespace perfwarden {

// fnmatch(3) without flags: "*" also matches '/' ("BM_Sort/*" matches "BM_Sort/1024/8"), and
// "?", "[...]" and backslash escapes work as in a shell.
bool Glob(std::string_view pattern, std::string_view text);

struct ThresholdRule {
  std::string suite = "*";  // "" matches every suite too
  std::string benchmark = "*";
  std::string metric = "*";
  // Absent: the caller's default (the request's threshold and alpha); present, in (0, 100] and
  // (0, 0.5].
  std::optional<double> percent = std::nullopt;
  std::optional<double> alpha = std::nullopt;
  // perfwarden.yaml only: the direction the runner records for the series it matches (the
  // verdict reads the direction stored with the series, so the judge does not apply it).
  std::optional<Direction> direction = std::nullopt;
  bool ignore = false;
  // Whether the series it matches gate (absent: a benchmark gates its primary metric alone,
  // judge/judge.h IsGatedByDefault); false: judged and reported (REPORTED), never failing.
  std::optional<bool> gate = std::nullopt;

  bool Matches(std::string_view suite_name, std::string_view benchmark_name,
               std::string_view metric_name) const;
  bool Matches(const SeriesKey& key) const { return Matches(key.suite, key.benchmark, key.metric); }
  bool operator==(const ThresholdRule&) const = default;
};

// The first rule that matches (rules apply in order, first match wins); nullptr when none.
const ThresholdRule* FirstMatch(std::span<const ThresholdRule> rules, std::string_view suite,
                                std::string_view benchmark, std::string_view metric);

// Parses "5%" (percent) or "0.05" (fraction) into a fraction; numbers >= 1 need the % sign.
// kInvalidArgument (field "threshold") otherwise.
Result<double> ParseThreshold(std::string_view text);

}  // namespace perfwarden
