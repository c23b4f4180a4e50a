// SPDX-License-Identifier: Apache-2.0
// Tests of the bisect messages: Decode(Encode(x)) == x for every type, the exact text of a bisect
// as the server has always written it (keys sorted, nulls where a value is absent), the strict
// request decoders refusing unknown keys and bad values with the field named, and the tolerant
// answer decoders ignoring unknown keys but not wrong types.
#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "wire/bisect.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

std::string Sha(char digit) { return std::string(40, digit); }

// A decoder's outcome without its value, so that tables can mix the message types.
template <class T>
Result<void> Status(const Result<T>& result) {
  if (!result) return tl::unexpected(result.error());
  return {};
}

RemoteBisectRequest Remote() {
  RemoteBisectRequest r;
  r.testbed = "gpu-1";
  r.good = Sha('a');
  r.bad = Sha('c');
  r.commits = {{Sha('a'), "good end", "Ann"}, {Sha('b'), "", ""}, {Sha('c'), "bad end", "Bo"}};
  r.benchmarks = {"BM_Train", "BM_Eval"};
  r.suite = "train";
  r.metric = "real_time";
  r.build = "make";
  r.options = json{{"repetitions", 8}, {"max_repetitions", 32}};
  r.alert_id = 12;
  return r;
}

json Report() {
  return {{"good", Sha('a')},
          {"bad", Sha('c')},
          {"culprits", {{{"sha", Sha('b')}, {"magnitude", 0.1}}}},
          {"probes", json::array()},
          {"warnings", json::array()}};
}

BisectStep DoneStep() {
  return {.id = 41,
          .ordinal = 0,
          .state = "done",
          .agent = "host:1",
          .attempts = 1,
          .targets = {0, 2},
          .repetitions = 8,
          .lease_expires_at = std::nullopt,
          .last_error = std::nullopt,
          .finished_at = "2024-03-01T12:00:00Z",
          .reused_from = std::nullopt,
          .builds = 2,
          .runs = 2};
}

Bisect RemoteBisect() {
  Bisect b;
  b.id = 3;
  b.alert_id = 12;
  b.good = Sha('a');
  b.bad = Sha('c');
  b.state = "running";
  b.created_by = "ci";
  b.created_at = "2024-03-01T11:00:00Z";
  b.remote = BisectRemote{.testbed = "gpu-1",
                          .job = BisectJob{.commits = 2,
                                           .benchmarks = {"BM_Train"},
                                           .suite = "",
                                           .metric = "",
                                           .build = "",
                                           .options = json{{"repetitions", 8}}}};
  BisectStep queued{.id = 42, .ordinal = 1, .state = "claimed", .agent = "host:2", .attempts = 2};
  queued.targets = {1};
  queued.repetitions = 8;
  queued.lease_expires_at = "2024-03-01T12:01:00Z";
  queued.last_error = "commit not found";
  queued.reused_from = 7;
  b.steps = {DoneStep(), queued};
  b.progress = json{{"probes", json::array()}, {"pending", {{"targets", {1}}, {"repetitions", 8}}}};
  return b;
}

Bisect PostedBisect() {
  Bisect b;
  b.id = 4;
  b.good = Sha('a');
  b.bad = Sha('c');
  b.state = "succeeded";
  b.culprit = Sha('b');
  b.created_by = "ci";
  b.created_at = "2024-03-01T11:00:00Z";
  b.report = Report();
  return b;
}

ClaimedStep Claimed() {
  ClaimedStep s;
  s.id = 41;
  s.bisect_id = 3;
  s.ordinal = 0;
  s.token = std::string(32, 'f');
  s.lease_seconds = 60;
  s.lease_expires_at = "2024-03-01T12:01:00Z";
  s.attempt = 1;
  s.request = json{{"targets", {0, 2}}, {"repetitions", 8}};
  s.commits = {{0, Sha('a'), "good end"}, {2, Sha('c'), "bad end"}};
  s.good = Sha('a');
  s.bad = Sha('c');
  s.benchmarks = {"BM_Train"};
  s.suite = "train";
  s.metric = "real_time";
  s.build = "make";
  return s;
}

json Measurement() {
  return {{"request", {{"targets", {0, 2}}, {"repetitions", 2}}},
          {"results", {{{"samples", {1.0, 2.0}}}, {{"samples", {3.0, 4.0}}}}},
          {"suite", "train"},
          {"metric", "real_time"},
          {"direction", "lower"}};
}

// --- round trips ------------------------------------------------------------------------------

TEST(WireBisect, RequestsRoundTrip) {
  RemoteBisectRequest bare = Remote();
  bare.suite = bare.metric = bare.build = "";
  bare.options.reset();
  bare.alert_id.reset();
  for (const RemoteBisectRequest& r : {Remote(), bare}) {
    const json encoded = EncodeRemoteBisectRequest(r);
    auto decoded = DecodeRemoteBisectRequest(encoded);
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, r) << encoded.dump();
    auto either = DecodeNewBisect(encoded);
    ASSERT_TRUE(either.has_value()) << either.error().ToString();
    ASSERT_TRUE(std::holds_alternative<RemoteBisectRequest>(*either));
    EXPECT_EQ(std::get<RemoteBisectRequest>(*either), r);
  }
  for (const BisectReportUpload& u : {BisectReportUpload{.report = Report(), .alert_id = 12},
                                      BisectReportUpload{.report = Report(), .alert_id = {}}}) {
    const json encoded = EncodeBisectReportUpload(u);
    auto decoded = DecodeNewBisect(encoded);
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    ASSERT_TRUE(std::holds_alternative<BisectReportUpload>(*decoded));
    EXPECT_EQ(std::get<BisectReportUpload>(*decoded), u) << encoded.dump();
  }
  for (const StepClaimRequest& c : {StepClaimRequest{"gpu-1", "host:1", 120},
                                    StepClaimRequest{"gpu-1", "host:1", std::nullopt}}) {
    auto decoded = DecodeStepClaimRequest(EncodeStepClaimRequest(c));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, c);
  }
  for (const StepHeartbeat& h : {StepHeartbeat{std::string(32, 'a'), 30},
                                 StepHeartbeat{std::string(32, 'a'), std::nullopt}}) {
    auto decoded = DecodeStepHeartbeat(EncodeStepHeartbeat(h));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, h);
  }
  const std::string token(32, '0');
  for (const StepReport& r :
       {StepReport{.token = token, .measurement = Measurement(), .builds = 2, .runs = 3},
        StepReport{.token = token, .measurement = Measurement()},
        StepReport{.token = token, .error = "the build failed"}}) {
    auto decoded = DecodeStepReport(EncodeStepReport(r));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, r);
  }
}

TEST(WireBisect, AnswersRoundTrip) {
  Bisect unreadable_job = RemoteBisect();
  unreadable_job.remote->job.reset();
  unreadable_job.progress.reset();
  unreadable_job.error = "the good end does not build";
  for (const Bisect& b : {RemoteBisect(), PostedBisect(), unreadable_job}) {
    const json encoded = EncodeBisect(b);
    auto bare = DecodeBisect(encoded);
    ASSERT_TRUE(bare.has_value()) << bare.error().ToString();
    EXPECT_EQ(*bare, b) << encoded.dump();
    auto enveloped = DecodeBisect(json{{"bisect", encoded}});
    ASSERT_TRUE(enveloped.has_value()) << enveloped.error().ToString();
    EXPECT_EQ(*enveloped, b);
  }
  auto claimed = DecodeClaimedStep(json{{"step", EncodeClaimedStep(Claimed())}});
  ASSERT_TRUE(claimed.has_value()) << claimed.error().ToString();
  EXPECT_EQ(*claimed, Claimed());
  const StepLease lease{.id = 41, .lease_seconds = 60, .lease_expires_at = "2024-03-01T12:01:00Z"};
  auto renewed = DecodeStepLease(json{{"step", EncodeStepLease(lease)}});
  ASSERT_TRUE(renewed.has_value()) << renewed.error().ToString();
  EXPECT_EQ(*renewed, lease);
}

// The server has written these keys and nulls since remote bisects exist; clients parse them.
TEST(WireBisect, TheBisectTextTheServerWrites) {
  Bisect b = RemoteBisect();
  b.alert_id.reset();
  b.steps = {DoneStep()};
  b.progress.reset();
  EXPECT_EQ(
      EncodeBisect(b).dump(),
      R"({"alert_id":null,"bad":")" + Sha('c') +
          R"(","created_at":"2024-03-01T11:00:00Z","created_by":"ci","culprit":null,"error":null,)"
          R"("finished_at":null,"good":")" +
          Sha('a') +
          R"(","id":3,"remote":{"benchmarks":["BM_Train"],"build":"","commits":2,"metric":"",)"
          R"("options":{"repetitions":8},"suite":"","testbed":"gpu-1"},"state":"running",)"
          R"("steps":[{"agent":"host:1","attempts":1,"builds":2,"finished_at":)"
          R"("2024-03-01T12:00:00Z","id":41,"last_error":null,"lease_expires_at":null,)"
          R"("ordinal":0,"repetitions":8,"reused_from":null,"runs":2,"state":"done",)"
          R"("targets":[0,2]}]})");
  // A posted answer has none of the remote keys.
  EXPECT_EQ(EncodeBisect(PostedBisect()).dump().find("steps"), std::string::npos);
}

TEST(WireBisect, TheReportUploadKeepsThePostedAnswer) {
  json body = Report();
  body["alert_id"] = 12;
  body["remote"] = false;
  auto upload = DecodeBisectReportUpload(body);
  ASSERT_TRUE(upload.has_value()) << upload.error().ToString();
  EXPECT_EQ(upload->alert_id, 12);
  EXPECT_FALSE(upload->report.contains("alert_id"));
  EXPECT_EQ(upload->report["remote"], false);
  EXPECT_EQ(upload->good(), Sha('a'));
  EXPECT_EQ(upload->bad(), Sha('c'));
  EXPECT_EQ(upload->culprit(), Sha('b'));
  body["culprits"] = json::array();
  EXPECT_EQ(DecodeBisectReportUpload(body)->culprit(), "");
  body["alert_id"] = nullptr;
  EXPECT_EQ(DecodeBisectReportUpload(body)->alert_id, std::nullopt);
}

// --- strict request decoders ------------------------------------------------------------------

std::string KnownList(const Error& error) {
  const size_t open = error.message.find("(known: ");
  return open == std::string::npos ? "" : error.message.substr(open);
}

TEST(WireBisect, RequestDecodersRefuseUnknownKeysNamingTheKnownOnes) {
  json remote = EncodeRemoteBisectRequest(Remote());
  remote["colour"] = "red";
  auto refused = DecodeNewBisect(remote);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().field, "colour");
  EXPECT_EQ(KnownList(refused.error()),
            "(known: remote, testbed, good, bad, commits, benchmarks, suite, metric, build, "
            "options, alert_id)");
  const std::string token(32, 'a');
  const std::vector<std::pair<Result<void>, std::string>> cases = {
      {Status(DecodeStepClaimRequest({{"testbed", "t"}, {"agent", "a"}, {"queue", "x"}})),
       "(known: testbed, agent, lease_seconds)"},
      {Status(DecodeStepHeartbeat({{"token", token}, {"lease", 5}})),
       "(known: token, lease_seconds)"},
      {Status(DecodeStepReport({{"token", token}, {"error", "x"}, {"log", "y"}})),
       "(known: token, measurement, builds, runs, error)"},
  };
  for (const auto& [result, known] : cases) {
    ASSERT_FALSE(result.has_value()) << known;
    EXPECT_EQ(KnownList(result.error()), known);
  }
  // A posted answer is free-form beyond the keys the server reads.
  json answer = Report();
  answer["resumed"] = true;
  EXPECT_TRUE(DecodeNewBisect(answer).has_value());
}

TEST(WireBisect, RemoteRequestRefusalsNameTheField) {
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"remote not a boolean", [](json& b) { b["remote"] = "yes"; }, "remote"},
      {"testbed missing", [](json& b) { b.erase("testbed"); }, "testbed"},
      {"testbed not a name", [](json& b) { b["testbed"] = "a b"; }, "testbed"},
      {"good not a sha", [](json& b) { b["good"] = "abc"; }, "good"},
      {"bad upper case", [](json& b) { b["bad"] = std::string(40, 'C'); }, "bad"},
      {"bad is good", [](json& b) { b["bad"] = b["good"]; }, "bad"},
      {"commits not an array", [](json& b) { b["commits"] = "x"; }, "commits"},
      {"one commit", [](json& b) { b["commits"] = json::array({b["commits"][0]}); }, "commits"},
      {"commit not an object", [](json& b) { b["commits"][1] = 5; }, "commits[1]"},
      {"commit subject a number", [](json& b) { b["commits"][1]["subject"] = 5; },
       "commits[1].subject"},
      {"repeated commit", [](json& b) { b["commits"][1] = b["commits"][0]; }, "commits[1].sha"},
      {"not starting at good", [](json& b) { b["commits"][0]["sha"] = Sha('d'); },
       "commits[0].sha"},
      {"not ending at bad", [](json& b) { b["commits"][2]["sha"] = Sha('d'); }, "commits[2].sha"},
      {"no benchmarks", [](json& b) { b["benchmarks"] = json::array(); }, "benchmarks"},
      {"empty benchmark", [](json& b) { b["benchmarks"][1] = ""; }, "benchmarks[1]"},
      {"suite a number", [](json& b) { b["suite"] = 3; }, "suite"},
      {"options an array", [](json& b) { b["options"] = json::array(); }, "options"},
      {"alert id zero", [](json& b) { b["alert_id"] = 0; }, "alert_id"},
      {"alert id text", [](json& b) { b["alert_id"] = "12"; }, "alert_id"},
  };
  for (const Case& c : cases) {
    json body = EncodeRemoteBisectRequest(Remote());
    c.mutate(body);
    auto refused = DecodeNewBisect(body);
    ASSERT_FALSE(refused.has_value()) << c.name;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument) << c.name;
    EXPECT_EQ(refused.error().field, c.field) << c.name << ": " << refused.error().message;
  }
  // Null reads as absent for the optional keys.
  json nulls = EncodeRemoteBisectRequest(Remote());
  for (const char* key : {"suite", "metric", "build", "options", "alert_id"}) nulls[key] = nullptr;
  nulls["commits"][1]["author"] = nullptr;
  auto decoded = DecodeRemoteBisectRequest(nulls);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(decoded->suite, "");
  EXPECT_FALSE(decoded->options.has_value());
  EXPECT_FALSE(DecodeRemoteBisectRequest(json{{"remote", false}}).has_value());
  EXPECT_FALSE(DecodeRemoteBisectRequest(json::array()).has_value());
}

TEST(WireBisect, ReportUploadRefusalsNameTheField) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& b) { b.erase("good"); }, "good"},
      {[](json& b) { b["bad"] = "HEAD"; }, "bad"},
      {[](json& b) { b["culprits"] = json::object(); }, "culprits"},
      {[](json& b) { b["culprits"][0]["sha"] = 7; }, "culprits[0].sha"},
      {[](json& b) { b["alert_id"] = -3; }, "alert_id"},
  };
  for (const auto& [mutate, field] : cases) {
    json body = Report();
    mutate(body);
    auto refused = DecodeNewBisect(body);
    ASSERT_FALSE(refused.has_value()) << field;
    EXPECT_EQ(refused.error().field, field) << refused.error().message;
  }
  EXPECT_EQ(DecodeBisectReportUpload(json{{"remote", true}}).error().field, "remote");
}

TEST(WireBisect, StepRequestRefusalsNameTheField) {
  const std::string token(32, 'a');
  const std::vector<std::pair<Result<void>, std::string>> cases = {
      {Status(DecodeStepClaimRequest({{"agent", "a"}})), "testbed"},
      {Status(DecodeStepClaimRequest({{"testbed", ""}, {"agent", "a"}})), "testbed"},
      {Status(DecodeStepClaimRequest({{"testbed", "t"}, {"agent", std::string(201, 'x')}})),
       "agent"},
      {Status(DecodeStepClaimRequest({{"testbed", "t"}, {"agent", "a"}, {"lease_seconds", 4}})),
       "lease_seconds"},
      {Status(DecodeStepClaimRequest({{"testbed", "t"}, {"agent", "a"}, {"lease_seconds", "60"}})),
       "lease_seconds"},
      {Status(DecodeStepHeartbeat({{"token", "ABC"}})), "token"},
      {Status(DecodeStepHeartbeat({{"token", std::string(32, 'A')}})), "token"},
      {Status(DecodeStepHeartbeat({{"token", token}, {"lease_seconds", 3601}})), "lease_seconds"},
      {Status(DecodeStepReport({{"token", token}})), "measurement"},
      {Status(DecodeStepReport({{"token", token}, {"measurement", Measurement()}, {"error", "x"}})),
       "measurement"},
      {Status(DecodeStepReport({{"token", token}, {"error", ""}})), "error"},
      {Status(DecodeStepReport({{"token", token}, {"error", 5}})), "error"},
      {Status(DecodeStepReport({{"token", token}, {"measurement", Measurement()}, {"builds", -1}})),
       "builds"},
      {Status(DecodeStepReport(
           {{"token", token}, {"measurement", Measurement()}, {"runs", int64_t{INT_MAX} + 1}})),
       "runs"},
      {Status(DecodeStepReport({{"measurement", Measurement()}})), "token"},
  };
  for (const auto& [result, field] : cases) {
    ASSERT_FALSE(result.has_value()) << field;
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(result.error().field, field) << result.error().message;
  }
  // Beside an error, builds and runs are not read (the server never has).
  auto error = DecodeStepReport({{"token", token}, {"error", "x"}, {"builds", "many"}});
  ASSERT_TRUE(error.has_value()) << error.error().ToString();
  EXPECT_EQ(error->builds, std::nullopt);
  EXPECT_TRUE(IsStepToken(std::string(32, 'f')));
  EXPECT_FALSE(IsStepToken(std::string(31, 'f')));
  EXPECT_FALSE(IsStepToken(std::string(32, 'g')));
}

// --- tolerant answer decoders -----------------------------------------------------------------

TEST(WireBisect, AnswerDecodersIgnoreUnknownKeysButNotWrongTypes) {
  json newer = EncodeBisect(RemoteBisect());
  newer["priority"] = 3;
  newer["steps"][0]["host"] = "h";
  auto decoded = DecodeBisect(newer);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, RemoteBisect());

  struct Case {
    std::function<void(json&)> mutate;
    std::string field;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](json& b) { b["bisect"]["id"] = "3"; }, "bisect.id", "expected an integer, got a string"},
      {[](json& b) { b["bisect"].erase("state"); }, "bisect.state", "missing"},
      {[](json& b) { b["bisect"]["culprit"] = 5; }, "bisect.culprit",
       "expected a string, got a number"},
      {[](json& b) { b["bisect"]["report"] = "done"; }, "bisect.report",
       "expected an object, got a string"},
      {[](json& b) { b["bisect"]["remote"] = json::array(); }, "bisect.remote",
       "expected an object, got an array"},
      {[](json& b) { b["bisect"]["remote"]["benchmarks"][0] = 1; }, "bisect.remote.benchmarks[0]",
       "expected a string, got a number"},
      {[](json& b) { b["bisect"]["steps"][1]["targets"][0] = 1.5; }, "bisect.steps[1].targets[0]",
       "expected an integer, got a number"},
      {[](json& b) { b["bisect"]["steps"][0]["targets"][0] = ULLONG_MAX; },
       "bisect.steps[0].targets[0]", "expected an integer, got a number"},
      {[](json& b) { b["bisect"]["alert_id"] = ULLONG_MAX; }, "bisect.alert_id",
       "expected an integer, got a number"},
      {[](json& b) { b["bisect"]["steps"][0] = 7; }, "bisect.steps[0]",
       "expected an object, got a number"},
      {[](json& b) { b["bisect"] = nullptr; }, "bisect", "must not be null"},
  };
  for (const Case& c : cases) {
    json document = {{"bisect", EncodeBisect(RemoteBisect())}};
    c.mutate(document);
    auto refused = DecodeBisect(document);
    ASSERT_FALSE(refused.has_value()) << c.field;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(refused.error().field, c.field);
    EXPECT_EQ(refused.error().message, c.message) << c.field;
  }
  EXPECT_EQ(DecodeBisect(json::array()).error().message, "expected an object, got an array");

  json step = EncodeClaimedStep(Claimed());
  step.erase("token");
  EXPECT_EQ(DecodeClaimedStep(step).error().field, "token");
  step = EncodeClaimedStep(Claimed());
  step["request"] = json::array();
  EXPECT_EQ(DecodeClaimedStep(json{{"step", step}}).error().field, "step.request");
  step = EncodeClaimedStep(Claimed());
  step["commits"][1]["position"] = "2";
  EXPECT_EQ(DecodeClaimedStep(step).error().field, "commits[1].position");
  EXPECT_EQ(DecodeStepLease(json{{"step", {{"lease_seconds", 60}}}}).error().field, "step.id");
}

}  // namespace
}  // namespace perfwarden::wire
