// SPDX-License-Identifier: Apache-2.0
// The answer of a bisect (local, or remote on the server's agents): culprits with their steps,
// the evidence table, and what it cost. Its JSON is what `perfwarden bisect --format json` prints,
// what the server stores with the bisect, and what `perfwarden bisect status` reads back.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bisect/decide.h"
#include "core/result.h"

namespace perfwarden::bisect {

struct ProbeRecord {
  std::size_t position = 0;  // 0 the good end, commits in order, the bad end last
  std::string sha;
  std::string subject;
  int n = 0;            // repetitions measured (of the first benchmark)
  double median = 0;    // of the first benchmark
  std::string verdict;  // good, bad, skip, unknown
  std::string reason;
};

struct Culprit {
  std::string sha;
  std::string author;
  std::string subject;
  bool exact = true;                    // false: one of `candidates` (the others were skipped)
  std::vector<std::string> candidates;  // shas in (last good, first bad] when not exact
  double magnitude = 0;                 // median(first bad) / median(last good) - 1
  double ci_low = 0, ci_high = 0;       // 95% bootstrap
  double share = 1;                     // magnitude / the ends' change
};

struct Report {
  std::string good_sha, bad_sha;
  std::string suite, metric;
  std::vector<std::string> benchmarks;
  std::size_t commits = 0;  // in (good, bad]
  EndpointCheck endpoints;
  std::vector<Culprit> culprits;
  std::vector<ProbeRecord> probes;  // in the order they were decided
  int posted = 0;                   // commits posted to the server this session (local mode)
  int builds = 0;                   // builds and suite runs, all sessions together
  int runs = 0;
  std::size_t measurements = 0;          // side-by-side measurements made, all sessions together
  std::size_t expected_probes = 0;       // ceil(log2(commits))
  bool resumed = false;                  // local mode: continued from a state file
  std::size_t resumed_measurements = 0;  // of them, those taken from the state file
  std::vector<std::string> warnings;
};

nlohmann::ordered_json ReportJson(const Report& report);
// Reads what ReportJson wrote; kInvalidArgument naming the field that is missing or mistyped.
Result<Report> ReportFromJson(const nlohmann::json& j);

}  // namespace perfwarden::bisect
