// SPDX-License-Identifier: Apache-2.0
// Wire format v1, the run upload: the JSON a runner posts for one run (../shared/DESIGN.md),
// decoded into typed values and validated before anything touches the store. Every rejection
// names the field ("results[3].values[2]") and the problem; nothing is partially accepted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"

namespace perfwarden::wire {

struct Commit {
  std::string sha;                   // 40 lowercase hex
  std::vector<std::string> parents;  // 40 hex each
  std::string time;                  // RFC 3339 as sent (validated), "" when absent
  std::string subject;
  std::string author;

  bool operator==(const Commit&) const = default;
};

struct Testbed {
  std::string name;
  // The host/GPU fingerprint as a JSON object text (cpu_model, cores, governor, kernel,
  // compiler, gpu: [...]); kept whole so that new keys need no schema change.
  std::string fingerprint_json = "{}";

  bool operator==(const Testbed&) const = default;
};

struct CiInfo {
  std::string provider;  // "github", "gitlab", "" ...
  std::string job_url;
  std::optional<int64_t> pr;
  std::string extra_json = "{}";  // any other keys of "ci"

  bool operator==(const CiInfo&) const = default;
};

// One series of the run; on the wire its key's fields stand flat beside the unit
// ({"suite", "benchmark", "metric", "unit", "direction", "values"}).
struct ResultSeries {
  SeriesKey key;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<double> values;  // one per repetition, finite; times must be >= 0

  bool operator==(const ResultSeries&) const = default;
};

struct RunUpload {
  std::string id;  // UUID made by the client (lowercase canonical 8-4-4-4-12): idempotency key
  std::string project;
  std::string branch;
  Commit commit;
  std::optional<std::string> merge_base;
  std::string target_branch;
  // First-parent chain from the commit back towards the target branch, as the runner computed
  // it (newest first); used for baseline selection. May be empty.
  std::vector<std::string> ancestry;
  Testbed testbed;
  CiInfo ci;
  std::string started_at;   // RFC 3339 as sent, "" when absent
  std::string finished_at;  // RFC 3339 as sent, "" when absent; not before started_at
  std::vector<ResultSeries> results;
  // The perfwarden build that measured the run (core/version.h, `git describe`), "" when absent
  // (older runners); 1..128 printable ASCII characters. The verdict shows it.
  std::string runner_version;
  size_t SampleCount() const;

  // Field-wise; what the Decode(Encode(x)) == x round trip is checked with.
  bool operator==(const RunUpload&) const = default;
};

struct DecodeLimits {
  size_t max_results = 100000;  // series per run
  size_t max_values = 100000;   // repetitions per series; also commit.parents, ancestry
  size_t max_string = 4096;     // bytes per string or key, anywhere in the document
  int max_depth = 32;           // JSON nesting
  // Values of the body outside its series, which are decoded and dropped one by one as the body
  // is read: besides commit.parents and ancestry, the free-form testbed.fingerprint and ci (a
  // paired measurement: its parameters). Together with the limits above it bounds the memory
  // a body costs while it is decoded (docs/reliability.md, "Memory").
  size_t max_other_values = 100000;
};

// Decodes and validates a run upload (docs/wire-format.md lists every rule). Errors are
// kInvalidArgument with `field` set ("" when the body as a whole is at fault). Unknown keys are
// rejected at every level (a typo must not silently drop data) except inside
// "testbed.fingerprint" and "ci", whose extra keys are kept.
Result<RunUpload> DecodeRunUpload(std::string_view json_text, const DecodeLimits& limits = {});

// The canonical JSON of an upload (what the server stores and returns).
std::string EncodeRunUpload(const RunUpload& run);

}  // namespace perfwarden::wire
