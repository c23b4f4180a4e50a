// SPDX-License-Identifier: Apache-2.0
// The server's bisect answers decoded as `perfwarden bisect status` and `perfwarden agent` read
// them, through wire/json_reader.h: unknown keys are ignored (a newer server adds some), an absent
// or null key takes its default, a key that is present must have its documented type, and the first
// error names the path of the key at fault.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "wire/bisect.h"
#include "wire/json_check.h"
#include "wire/json_reader.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;
using Reader = JsonReader<json>;

BisectStep ReadStep(Reader& reader, const json& object, const std::string& path) {
  BisectStep step;
  step.id = reader.Integer(object, "id", path, Reader::kNoMinimum, /*required=*/true).value_or(0);
  step.ordinal = reader.Integer(object, "ordinal", path).value_or(0);
  step.state = reader.String(object, "state", path);
  step.agent = reader.OptString(object, "agent", path);
  step.attempts = reader.Integer(object, "attempts", path).value_or(0);
  step.targets = reader.Integers(object, "targets", path);
  step.repetitions = reader.Integer(object, "repetitions", path).value_or(0);
  step.lease_expires_at = reader.OptString(object, "lease_expires_at", path);
  step.last_error = reader.OptString(object, "last_error", path);
  step.finished_at = reader.OptString(object, "finished_at", path);
  step.reused_from = reader.Integer(object, "reused_from", path);
  step.builds = reader.Integer(object, "builds", path);
  step.runs = reader.Integer(object, "runs", path);
  return step;
}

BisectRemote ReadRemote(Reader& reader, const json& object, const std::string& path) {
  BisectRemote remote;
  remote.testbed = reader.String(object, "testbed", path);
  if (reader.Member(object, "commits", FieldPath(path, "commits"), false) == nullptr) return remote;
  BisectJob job;
  job.commits = reader.Integer(object, "commits", path).value_or(0);
  job.benchmarks = reader.Strings(object, "benchmarks", path);
  job.suite = reader.String(object, "suite", path);
  job.metric = reader.String(object, "metric", path);
  job.build = reader.String(object, "build", path);
  job.options = reader.OptObject(object, "options", path).value_or(json::object());
  remote.job = std::move(job);
  return remote;
}

Bisect ReadBisect(Reader& reader, const json& object, const std::string& path) {
  Bisect b;
  b.id = reader.Integer(object, "id", path, Reader::kNoMinimum, /*required=*/true).value_or(0);
  b.alert_id = reader.Integer(object, "alert_id", path);
  b.good = reader.String(object, "good", path, /*required=*/true);
  b.bad = reader.String(object, "bad", path, /*required=*/true);
  b.state = reader.String(object, "state", path, /*required=*/true);
  b.culprit = reader.OptString(object, "culprit", path);
  b.created_by = reader.String(object, "created_by", path);
  b.created_at = reader.String(object, "created_at", path);
  b.report = reader.OptObject(object, "report", path);
  if (const json* remote = reader.Object(object, "remote", path)) {
    b.remote = ReadRemote(reader, *remote, FieldPath(path, "remote"));
  }
  b.error = reader.OptString(object, "error", path);
  b.finished_at = reader.OptString(object, "finished_at", path);
  reader.ForEachObject(object, "steps", path, /*required=*/false,
                       [&](const json& item, const std::string& at) {
                         b.steps.push_back(ReadStep(reader, item, at));
                       });
  b.progress = reader.OptObject(object, "progress", path);
  return b;
}

ClaimedStep ReadClaimedStep(Reader& reader, const json& object, const std::string& path) {
  ClaimedStep step;
  step.id = reader.Integer(object, "id", path, Reader::kNoMinimum, /*required=*/true).value_or(0);
  step.bisect_id =
      reader.Integer(object, "bisect_id", path, Reader::kNoMinimum, /*required=*/true).value_or(0);
  step.ordinal = reader.Integer(object, "ordinal", path).value_or(0);
  step.token = reader.String(object, "token", path, /*required=*/true);
  step.lease_seconds = reader.Integer(object, "lease_seconds", path).value_or(0);
  step.lease_expires_at = reader.String(object, "lease_expires_at", path);
  step.attempt = reader.Integer(object, "attempt", path).value_or(0);
  step.request = reader.OptObject(object, "request", path, /*required=*/true).value_or(json());
  reader.ForEachObject(object, "commits", path, /*required=*/false,
                       [&](const json& item, const std::string& at) {
                         step.commits.push_back({reader.Integer(item, "position", at).value_or(0),
                                                 reader.String(item, "sha", at, /*required=*/true),
                                                 reader.String(item, "subject", at)});
                       });
  step.good = reader.String(object, "good", path);
  step.bad = reader.String(object, "bad", path);
  step.benchmarks = reader.Strings(object, "benchmarks", path);
  step.suite = reader.String(object, "suite", path);
  step.metric = reader.String(object, "metric", path);
  step.build = reader.String(object, "build", path);
  return step;
}

}  // namespace

Result<Bisect> DecodeBisect(const json& document) {
  return ReadDocument<Bisect>(document, kBisectEnvelope, ReadBisect);
}

Result<ClaimedStep> DecodeClaimedStep(const json& document) {
  return ReadDocument<ClaimedStep>(document, kStepEnvelope, ReadClaimedStep);
}

Result<StepLease> DecodeStepLease(const json& document) {
  return ReadDocument<StepLease>(
      document, kStepEnvelope, [](Reader& reader, const json& object, const std::string& path) {
        return StepLease{
            reader.Integer(object, "id", path, Reader::kNoMinimum, /*required=*/true).value_or(0),
            reader.Integer(object, "lease_seconds", path).value_or(0),
            reader.String(object, "lease_expires_at", path)};
      });
}

}  // namespace perfwarden::wire
