// SPDX-License-Identifier: Apache-2.0
// Tests of the verdict request: Decode(Encode(x)) == x for the gate's request and the server's
// stored parameters, the exact text both sides write (pinned, as the stored parameters are
// compared to decide whether a verdict can be reused), and refusals that name the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "stats/verdict.h"
#include "wire/verdict_request.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

VerdictRequest GateRequest() {
  VerdictRequest request;
  request.threshold = 0.05;
  request.alpha = 0.05;
  request.rules = {{.benchmark = "BM_Copy/*", .percent = 3},
                   {.suite = "startup", .benchmark = "wall_time", .alpha = 0.01},
                   {.metric = "cpu_time", .ignore = true},
                   {.metric = "items_per_second", .gate = true}};
  request.contender_runs = {"run-2", "run-3"};
  return request;
}

VerdictRequest StoredParameters() {
  VerdictRequest request;
  request.threshold = 0.1;
  request.alpha = 0.01;
  request.test = "welch-log";
  request.rules = {{.benchmark = "BM_Sort/*", .metric = "real_time", .percent = 7.5}};
  request.correction = "holm";
  request.confidence = 0.95;
  request.bootstrap_resamples = 2000;
  request.seed = 0x5eed;
  request.power = 0.8;
  return request;
}

TEST(WireVerdictRequest, RoundTrips) {
  for (const VerdictRequest& request : {VerdictRequest{}, GateRequest(), StoredParameters()}) {
    const json encoded = EncodeVerdictRequest(request);
    auto decoded = DecodeVerdictRequest(encoded);
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, request) << encoded.dump();
    auto parsed = ParseVerdictRequest(encoded.dump());
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    EXPECT_EQ(*parsed, request);
  }
}

TEST(WireVerdictRequest, TheTextsBothSidesWrite) {
  EXPECT_EQ(
      EncodeVerdictRequest(GateRequest()).dump(),
      R"({"alpha":0.05,"contender_runs":["run-2","run-3"],"rules":[)"
      R"({"benchmark":"BM_Copy/*","metric":"*","percent":3.0,"suite":"*"},)"
      R"({"alpha":0.01,"benchmark":"wall_time","metric":"*","suite":"startup"},)"
      R"({"benchmark":"*","ignore":true,"metric":"cpu_time","suite":"*"},)"
      R"({"benchmark":"*","gate":true,"metric":"items_per_second","suite":"*"}],"threshold":0.05})");
  EXPECT_EQ(EncodeVerdictRequest(StoredParameters()).dump(),
            R"({"alpha":0.01,"bootstrap_resamples":2000,"confidence":0.95,"correction":"holm",)"
            R"("power":0.8,"rules":[{"benchmark":"BM_Sort/*","metric":"real_time","percent":7.5,)"
            R"("suite":"*"}],"seed":24301,"test":"welch-log","threshold":0.1})");
  ThresholdRule any_suite{.suite = ""};
  EXPECT_EQ(EncodeVerdictRequest({.rules = {any_suite}}).dump(),
            R"({"rules":[{"benchmark":"*","metric":"*","suite":"*"}]})");
}

TEST(WireVerdictRequest, EmptyTextIsAllDefaultsAndRunsAreDeduplicated) {
  EXPECT_EQ(*ParseVerdictRequest(" \n"), VerdictRequest{});
  auto decoded = ParseVerdictRequest(R"({"contender_runs": ["a", "b", "a"]})");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->contender_runs, (std::vector<std::string>{"a", "b"}));
}

TEST(WireVerdictRequest, RecordKeysOfAnotherTypeAreIgnored) {
  auto decoded = ParseVerdictRequest(
      R"({"correction": 1, "confidence": "x", "seed": -1, "power": null, "algorithm_version": 2})");
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, VerdictRequest{});
}

TEST(WireVerdictRequest, RefusalsNameTheField) {
  struct Case {
    const char* body;
    const char* field;
  };
  const Case cases[] = {
      {R"({"threshold": 0})", "threshold"},
      {R"({"alpha": 0.6})", "alpha"},
      {R"({"test": "ttest"})", "test"},
      {R"({"rules": {}})", "rules"},
      {R"({"rules": [{"percent": 0}]})", "rules[0].percent"},
      {R"({"rules": [{}, {"suite": ""}]})", "rules[1].suite"},
      {R"({"rules": [{"ignore": 1}]})", "rules[0].ignore"},
      {R"({"rules": [{"gate": "yes"}]})", "rules[0].gate"},
      {R"({"rules": [{"direction": "lower"}]})", "rules[0].direction"},
      {R"({"rules": [{"benchmark": "BM_\u0000*"}]})", "rules[0].benchmark"},
      {R"({"rules": [{}, {"suite": "s", "metric": "\u0000"}]})", "rules[1].metric"},
      {R"({"test": "utest\u0000"})", "test"},
      {R"({"contender_runs": [7]})", "contender_runs[0]"},
      {R"({"threshhold": 0.05})", "threshhold"},
  };
  for (const Case& c : cases) {
    auto decoded = ParseVerdictRequest(c.body);
    ASSERT_FALSE(decoded.has_value()) << c.body;
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument) << c.body;
    EXPECT_EQ(decoded.error().field, c.field) << c.body;
  }
  EXPECT_FALSE(ParseVerdictRequest("{").has_value());
  EXPECT_FALSE(ParseVerdictRequest("[]").has_value());
}

// The words the wire accepts are the statistics engine's tests, and each name it writes back.
TEST(WireVerdictRequest, TestWordsAreTheEnginesTests) {
  for (std::string_view word : VerdictTestWords()) {
    auto test = stats::ParseVerdictTest(word);
    ASSERT_TRUE(test.has_value()) << word;
    const std::string_view name = stats::VerdictTestName(*test);
    EXPECT_TRUE(DecodeVerdictRequest(json{{"test", name}}).has_value()) << name;
  }
}

}  // namespace
}  // namespace perfwarden::wire
