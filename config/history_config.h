// SPDX-License-Identifier: Apache-2.0
// The `history:` section of server.yaml: which branches the server watches, the detectors'
// parameters, and where new alerts are announced. Parsed beside server_config.cc,
// which hands it every "history.*" key.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "stats/history_detector.h"

namespace perfwarden::config {

struct HistoryConfig {
  bool enabled = true;                                     // analyse tracked branches' runs
  std::vector<std::string> branches = {"main", "master"};  // tracked branches
  // The detector's own defaults (tuned on the corpus of docs/statistics.md), so that the server
  // and `perfwarden analyze` agree unless configured otherwise.
  double threshold = stats::HistoryOptions{}.threshold;    // smallest change raising an alert
  std::size_t window = stats::HistoryOptions{}.window;     // e-divisive window (points)
  double max_pvalue = stats::HistoryOptions{}.max_pvalue;  // significance level
  std::string webhook_url;  // POSTed a JSON (Slack-compatible "text") per batch of new alerts
  std::string public_url;   // the server's address as users reach it, for links in messages
};

inline constexpr std::array<std::string_view, 7> kHistoryKeys = {
    "history.enabled",    "history.branches",    "history.threshold", "history.window",
    "history.max_pvalue", "history.webhook_url", "history.public_url"};

// Sets one "history.*" key from text (branches: comma-separated names). kInvalidArgument with a
// message saying what is wrong (no key or source prefix: the caller adds them); kNotFound for
// a key that is not in kHistoryKeys.
Result<void> SetHistoryKey(HistoryConfig& config, std::string_view key, std::string_view text);

}  // namespace perfwarden::config
