// SPDX-License-Identifier: Apache-2.0
// The verdict request, the body of POST .../runs/{id}/verdict, which is also the "parameters"
// the server stores with a verdict so that a replay judges exactly as the original did. The
// gate encodes it from perfwarden.yaml; the server decodes it (strictly: unknown keys and values
// out of range are kInvalidArgument naming the field) and encodes the parameters it stores.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/threshold_rule.h"

namespace perfwarden::wire {

struct VerdictRequest {
  // Absent: the server's defaults.
  std::optional<double> threshold = std::nullopt;  // relative change, (0, 1]
  std::optional<double> alpha = std::nullopt;      // (0, 0.5]
  std::optional<std::string> test = std::nullopt;  // one of VerdictTestWords()
  std::vector<ThresholdRule> rules = {};           // first match wins; at most 1000; always written
  // More runs of the same commit and testbed pooled with the run; at most 100, duplicates
  // dropped when decoded; written when there are any.
  std::vector<std::string> contender_runs = {};
  // Written with the parameters the server stores: fixed by the algorithm version, not chosen
  // by a client (a request may carry them; they are read when their types fit, else ignored).
  std::optional<std::string> correction = std::nullopt;
  std::optional<double> confidence = std::nullopt;
  std::optional<int64_t> bootstrap_resamples = std::nullopt;
  std::optional<uint64_t> seed = std::nullopt;
  std::optional<double> power = std::nullopt;

  bool operator==(const VerdictRequest&) const = default;
};

// The words "test" accepts ("utest", "mann-whitney", "welch", "welch-log"); the statistics
// engine maps them to its tests.
std::span<const std::string_view> VerdictTestWords();

// `body` must be an object; every key is optional.
Result<VerdictRequest> DecodeVerdictRequest(const nlohmann::json& body);
// The request text: "" (or only white space) is all defaults; otherwise a JSON object.
Result<VerdictRequest> ParseVerdictRequest(std::string_view text);
// Keys in nlohmann's (sorted) order; a rule's empty suite is written as "*".
nlohmann::json EncodeVerdictRequest(const VerdictRequest& request);

}  // namespace perfwarden::wire
