// SPDX-License-Identifier: Apache-2.0
// Remote bisects on the server: the queued job's request (wire::RemoteBisectRequest with its
// search options read, stored as JSON), and the replay that runs the bisect algorithm
// (bisect/driver.h) over the log of measured steps: its first request when a bisect is queued, its
// decision after each step an agent reports (the next step, or the answer), and its partial answer
// for status pages. No I/O: the store calls Decide inside the transaction that stores a step's
// result.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bisect/driver.h"
#include "core/result.h"
#include "server/store/bisect_store.h"
#include "server/store/history_store.h"
#include "wire/bisect.h"

namespace perfwarden::server::remote_bisect {

// What a remote bisect is queued with; fixed for its life.
struct RemoteBisect {
  std::string testbed;
  std::vector<bisect::CommitRef> commits;  // the good end first, the bad end last
  std::vector<std::string> benchmarks;     // the first one is judged
  std::string suite, metric, build;        // "" when the agent's perfwarden.yaml decides
  bisect::SearchOptions options;
  std::optional<int64_t> alert_id;

  const std::string& good() const { return commits.front().sha; }
  const std::string& bad() const { return commits.back().sha; }
};

// The body of POST .../bisects with "remote": true, as wire/ decoded it, with its search options
// read (bisect::SearchOptionsFromJson): kInvalidArgument naming the option at fault.
Result<RemoteBisect> FromWire(const wire::RemoteBisectRequest& request);

// bisect_jobs.request: commits, options, benchmarks, suite, metric, build. FromRequestJson
// reads it back (kInternal when the stored text is not what RequestJson wrote).
nlohmann::json RequestJson(const RemoteBisect& bisect);
Result<RemoteBisect> FromRequestJson(std::string_view text);

// The job and its step 0 (the algorithm's first request) as the store queues them.
Result<store::NewRemoteBisect> Prepare(const RemoteBisect& bisect, const std::string& created_by);

// The replay after a step is done (store::BisectReplay). The step just reported must carry its
// step's request and the suite, metric and direction of the bisect (kInvalidArgument, field
// measurement.*); an end that does not build fails the bisect with the driver's message.
Result<store::BisectDecision> Decide(const store::BisectReplayInput& input);

// The replay's partial answer of a pending or running bisect, for GET: the report so far
// (bisect::ReportJson) plus "pending", the measurement queued next. nullopt when finished.
Result<std::optional<nlohmann::json>> Progress(const store::BisectRecord& record);

// A claimed step as the agent gets it (POST .../bisect-steps/claim): the step, its token, the
// commits of its targets, and what to build and measure.
Result<wire::ClaimedStep> ClaimedStepOf(const store::ClaimedStep& step, const std::string& token);

// A new step token (wire::IsStepToken: 128 random bits as 32 lowercase hex digits; kInternal
// when the generator fails); the store keeps only auth::HashToken of one.
Result<std::string> NewStepToken();

}  // namespace perfwarden::server::remote_bisect
