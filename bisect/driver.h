// SPDX-License-Identifier: Apache-2.0
// The whole bisect algorithm of `perfwarden bisect`, without I/O: the ends measured side by side
// until the regression shows (or the cap says it does not), the search over the range (each
// probe measured interleaved with the window's two ends, repetitions doubled while undecided,
// commits that do not build stepped around), the culprit's step measured side by side with a
// bootstrap CI, and a search on the sides when the culprits explain too little of the change.
//
// Measurements are the only input. The driver asks for them one at a time (a Request: which
// positions, how many repetitions each) and is deterministic given their results, so a bisect is
// its log of measurements: replaying the log reaches the same point, which is how a local bisect
// resumes from its state file, and how the server runs a remote bisect (it replays the log after
// every step an agent reports, and queues the measurement the driver asks for next).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bisect/report.h"
#include "core/metric.h"
#include "core/result.h"

namespace perfwarden::bisect {

// A commit of the range; position 0 is the good end, the last position the bad end.
struct CommitRef {
  std::string sha;
  std::string subject;
  std::string author;
};

struct SearchOptions {
  double threshold = 0.05;   // smallest change between the ends worth bisecting (a fraction)
  int repetitions = 10;      // per measurement
  int max_repetitions = 80;  // doubling stops here
  double alpha = 0.01;       // per comparison of a probe with an end
  int max_culprits = 3;      // steps looked for when one explains only part of the change
  // While the culprits found explain less than this share of the change between the ends, the
  // sides of the last one are checked for another step.
  double explained_share = 0.9;
};

// One measurement: the positions `targets` measured side by side, interleaved a few repetitions
// at a time, `repetitions` each (a target that does not build is dropped).
struct Request {
  std::vector<std::size_t> targets;
  int repetitions = 0;
  bool operator==(const Request&) const = default;
};

struct TargetResult {
  bool skipped = false;  // did not build, or its suite failed: `note` says why
  std::string note;
  std::vector<double> samples;  // the first benchmark's metric
};

struct Measurement {
  Request request;
  std::vector<TargetResult> results;  // one per target, in the request's order
  // What the measurer resolved from perfwarden.yaml; the driver takes them from the first
  // measurement of the log.
  std::string suite;
  std::string metric;
  Direction direction = Direction::kLowerIsBetter;
};

using MeasureFn = std::function<Result<Measurement>(const Request&)>;
using ProgressFn = std::function<void(const std::string&)>;

struct Outcome {
  bool finished = false;
  // Finished: the answer. Pending: what is known so far (the ends' check once measured, the
  // probes decided, the culprits found), for status pages.
  Report report;
  std::optional<Request> pending;  // not finished: the measurement to make next
};

// Runs the bisect of `commits` (at least two: the good end, then the range in order; the bad end
// last). Takes the measurements of `log` first, in order (each must be the one the driver asks
// for: kInvalidArgument otherwise, the log is of another bisect); then calls `measure` and
// appends each result to `log`, or, when `measure` is empty, stops and returns the next request
// as pending. Errors: kInvalidArgument for bad options or a log that does not fit, kUnavailable
// when an end does not build or run (the bisect cannot go on), and whatever `measure` returns.
// `progress` (may be empty) gets one line per decision.
Result<Outcome> RunSearch(const std::vector<CommitRef>& commits, const SearchOptions& options,
                          std::vector<Measurement>* log, const MeasureFn& measure,
                          const ProgressFn& progress);

nlohmann::json RequestJson(const Request& request);
Result<Request> RequestFromJson(const nlohmann::json& j);
nlohmann::json MeasurementJson(const Measurement& measurement);
// Checks the shape (one result per target, finite samples); kInvalidArgument naming the field.
Result<Measurement> MeasurementFromJson(const nlohmann::json& j);
nlohmann::json SearchOptionsJson(const SearchOptions& options);
Result<SearchOptions> SearchOptionsFromJson(const nlohmann::json& j);

}  // namespace perfwarden::bisect
