// SPDX-License-Identifier: Apache-2.0
// docs/openapi.yaml against wire/bisect.h: every bisect message's encoding, with all its optional
// parts present, names exactly the documented properties of its schema (so a new field fails here
// until it is documented), and the strict request decoders accept exactly the documented keys
// (their own "(known: ...)" lists are the schemas' properties, every documented key is read, and
// a missing required key is refused naming it).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/openapi_schema.h"
#include "wire/bisect.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

class OpenApiBisectTest : public OpenApiDocTest {};

std::string Sha(char digit) { return std::string(40, digit); }
const std::string kToken(32, 'e');

wire::RemoteBisectRequest FullRemoteRequest() {
  wire::RemoteBisectRequest r;
  r.testbed = "gpu-1";
  r.good = Sha('a');
  r.bad = Sha('b');
  r.commits = {{Sha('a'), "good end", "Ann"}, {Sha('b'), "bad end", "Bo"}};
  r.benchmarks = {"BM_Train"};
  r.suite = "train";
  r.metric = "real_time";
  r.build = "make";
  r.options = json{{"repetitions", 8}};
  r.alert_id = 12;
  return r;
}

wire::Bisect FullBisect() {
  wire::Bisect b;
  b.id = 3;
  b.alert_id = 12;
  b.good = Sha('a');
  b.bad = Sha('b');
  b.state = "running";
  b.culprit = Sha('b');
  b.created_by = "ci";
  b.created_at = "2024-03-01T11:00:00Z";
  b.report = json{{"culprits", json::array()}};
  b.remote = wire::BisectRemote{
      .testbed = "gpu-1",
      .job = wire::BisectJob{.commits = 1, .benchmarks = {"BM_Train"}, .options = json::object()}};
  b.error = "the good end does not build";
  b.finished_at = "2024-03-01T12:00:00Z";
  b.steps = {wire::BisectStep{.id = 41,
                              .ordinal = 0,
                              .state = "done",
                              .agent = "host:1",
                              .attempts = 1,
                              .targets = {0, 1},
                              .repetitions = 8,
                              .lease_expires_at = "2024-03-01T12:01:00Z",
                              .last_error = "a host's error",
                              .finished_at = "2024-03-01T12:00:00Z",
                              .reused_from = 40,
                              .builds = 2,
                              .runs = 2}};
  b.progress = json{{"pending", {{"targets", {0}}, {"repetitions", 8}}}};
  return b;
}

wire::ClaimedStep FullClaimedStep() {
  wire::ClaimedStep s;
  s.id = 41;
  s.bisect_id = 3;
  s.token = kToken;
  s.request = json{{"targets", {0, 1}}, {"repetitions", 8}};
  s.commits = {{0, Sha('a'), "good end"}};
  s.benchmarks = {"BM_Train"};
  return s;
}

json Measurement() {
  return {{"request", {{"targets", {0}}, {"repetitions", 2}}},
          {"results", {{{"samples", {1.0, 2.0}}}}},
          {"suite", "train"},
          {"metric", "real_time"},
          {"direction", "lower"}};
}

// The keys a strict decoder names in its unknown-key refusal.
Keys KnownKeys(const Error& error) {
  Keys out;
  const size_t open = error.message.find("(known: ");
  if (open == std::string::npos) return out;
  std::stringstream known(error.message.substr(open + 8, error.message.find(')', open) - open - 8));
  for (std::string key; std::getline(known, key, ',');) out.insert(key.substr(key[0] == ' '));
  return out;
}

TEST_F(OpenApiBisectTest, TheAnswersNameExactlyTheDocumentedKeys) {
  const json bisect = wire::EncodeBisect(FullBisect());
  EXPECT_EQ(KeysOf(bisect), Properties("Bisect"));
  const YAML::Node properties = Schema("Bisect")["properties"];
  EXPECT_EQ(KeysOf(bisect["remote"]), KeysOf(properties["remote"]["properties"]));
  EXPECT_EQ(KeysOf(bisect["steps"][0]), Properties("BisectStep"));
  EXPECT_EQ(KeysOf(bisect["progress"]["pending"]), Properties("BisectRequest"));
  // The keys every bisect has, a posted local answer included.
  wire::Bisect posted = FullBisect();
  posted.report.reset();
  posted.remote.reset();
  posted.progress.reset();
  EXPECT_EQ(KeysOf(wire::EncodeBisect(posted)), Required("Bisect"));

  const json step = wire::EncodeClaimedStep(FullClaimedStep());
  EXPECT_EQ(KeysOf(step), Properties("ClaimedStep"));
  EXPECT_EQ(KeysOf(step), Required("ClaimedStep"));
  EXPECT_EQ(KeysOf(step["commits"][0]),
            KeysOf(Schema("ClaimedStep")["properties"]["commits"]["items"]["properties"]));
  EXPECT_EQ(KeysOf(step["request"]), Properties("BisectRequest"));
  const json lease = wire::EncodeStepLease({.id = 41, .lease_seconds = 60, .lease_expires_at = ""});
  EXPECT_EQ(KeysOf(lease), Properties("BisectStepLease"));
  EXPECT_EQ(KeysOf(lease), Required("BisectStepLease"));
}

TEST_F(OpenApiBisectTest, TheRequestsNameExactlyTheDocumentedKeys) {
  const json remote = wire::EncodeRemoteBisectRequest(FullRemoteRequest());
  EXPECT_EQ(KeysOf(remote), Properties("RemoteBisectRequest"));
  EXPECT_EQ(KeysOf(remote["commits"][0]),
            KeysOf(Schema("RemoteBisectRequest")["properties"]["commits"]["items"]["properties"]));
  EXPECT_EQ(KeysOf(wire::EncodeStepClaimRequest({"gpu-1", "host:1", 60})),
            Properties("BisectStepClaim"));
  EXPECT_EQ(KeysOf(wire::EncodeStepHeartbeat({kToken, 60})), Properties("BisectStepHeartbeat"));
  const wire::StepReport report{
      .token = kToken, .measurement = Measurement(), .builds = 1, .runs = 1, .error = "x"};
  EXPECT_EQ(KeysOf(wire::EncodeStepReport(report)), Properties("BisectStepReport"));
  EXPECT_EQ(KeysOf(wire::EncodeStepReport(report)["measurement"]), Properties("BisectMeasurement"));
  // A local answer as `perfwarden bisect --alert` posts it: the keys the server reads are the
  // documented ones (the rest of the answer is stored as it is).
  json answer = {{"remote", false},
                 {"good", Sha('a')},
                 {"bad", Sha('b')},
                 {"culprits", {{{"sha", Sha('b')}}}}};
  const json upload = wire::EncodeBisectReportUpload({.report = answer, .alert_id = 12});
  EXPECT_EQ(KeysOf(upload), Properties("BisectReportUpload"));
}

TEST_F(OpenApiBisectTest, TheStrictDecodersAcceptExactlyTheDocumentedKeys) {
  struct Case {
    std::string schema;
    json body;  // every documented key, valid
    std::function<Result<void>(const json&)> decode;
  };
  auto status = [](const auto& result) -> Result<void> {
    if (!result) return tl::unexpected(result.error());
    return {};
  };
  const std::vector<Case> cases = {
      {"RemoteBisectRequest", wire::EncodeRemoteBisectRequest(FullRemoteRequest()),
       [&](const json& b) { return status(wire::DecodeNewBisect(b)); }},
      {"BisectStepClaim", wire::EncodeStepClaimRequest({"gpu-1", "host:1", 60}),
       [&](const json& b) { return status(wire::DecodeStepClaimRequest(b)); }},
      {"BisectStepHeartbeat", wire::EncodeStepHeartbeat({kToken, 60}),
       [&](const json& b) { return status(wire::DecodeStepHeartbeat(b)); }},
      {"BisectStepReport",
       wire::EncodeStepReport(
           {.token = kToken, .measurement = Measurement(), .builds = 1, .runs = 1}),
       [&](const json& b) { return status(wire::DecodeStepReport(b)); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schema);
    EXPECT_FALSE(Schema(c.schema)["additionalProperties"].as<bool>(true));
    auto accepted = c.decode(c.body);
    EXPECT_TRUE(accepted.has_value()) << accepted.error().ToString();
    json unknown = c.body;
    unknown["undocumented"] = 1;
    auto refused = c.decode(unknown);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().field, "undocumented");
    EXPECT_EQ(KnownKeys(refused.error()), Properties(c.schema)) << refused.error().message;
    for (const std::string& key : Required(c.schema)) {
      if (key == "remote") continue;  // picks the kind of POST .../bisects: a local answer then
      json missing = c.body;
      missing.erase(key);
      auto incomplete = c.decode(missing);
      ASSERT_FALSE(incomplete.has_value()) << key;
      EXPECT_EQ(incomplete.error().field, key);
    }
  }
  // A report's error, the documented key not in the body above (it replaces the measurement).
  EXPECT_TRUE(wire::DecodeStepReport({{"token", kToken}, {"error", "no such commit"}}).has_value());
}

// A local answer's schema: every key the server reads is documented, and each is read (a bad
// value is refused naming it); its other keys are the answer's and are stored as posted.
TEST_F(OpenApiBisectTest, TheReportUploadKeysAreTheOnesTheServerReads) {
  EXPECT_FALSE(Schema("BisectReportUpload")["additionalProperties"].IsDefined());
  const json valid = {{"remote", false},
                      {"alert_id", 12},
                      {"good", Sha('a')},
                      {"bad", Sha('b')},
                      {"culprits", {{{"sha", Sha('b')}}}}};
  EXPECT_EQ(KeysOf(valid), Properties("BisectReportUpload"));
  ASSERT_TRUE(wire::DecodeNewBisect(valid).has_value());
  for (const std::string& key : Properties("BisectReportUpload")) {
    json bad = valid;
    bad[key] = json{{"not", "valid"}};
    auto refused = wire::DecodeNewBisect(bad);
    ASSERT_FALSE(refused.has_value()) << key;
    EXPECT_EQ(refused.error().field, key);
  }
  for (const std::string& key : Required("BisectReportUpload")) {
    json missing = valid;
    missing.erase(key);
    auto refused = wire::DecodeNewBisect(missing);
    ASSERT_FALSE(refused.has_value()) << key;
    EXPECT_EQ(refused.error().field, key);
  }
}

}  // namespace
}  // namespace perfwarden::server::api
