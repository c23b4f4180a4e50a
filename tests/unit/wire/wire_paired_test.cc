// SPDX-License-Identifier: Apache-2.0
// wire/paired.h: the paired measurement's round trip and its strict decoding (every rejection
// names its field; nothing partial is accepted).
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "wire/paired.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

PairedMeasurement Sample() {
  PairedMeasurement m;
  m.baseline_commit = std::string(40, 'a');
  m.testbed.name = "ci-runner";
  m.testbed.fingerprint_json = R"({"cores":2,"cpu_model":"x"})";
  m.parameters.threshold = 0.05;
  m.parameters.alpha = 0.05;
  ThresholdRule rule;
  rule.benchmark = "BM_Noisy*";
  rule.percent = 10;
  m.parameters.rules = {rule};
  m.design.repetitions = 5;
  m.design.min_blocks = 6;
  m.design.max_blocks = 30;
  m.design.growth = 1.5;
  m.design.test = "wilcoxon";
  m.design.seed = 42;
  m.design.stopped = "max_blocks";
  PairedSeries s;
  s.key = {"core", "BM_Sort/1024", "real_time"};
  s.unit = "ns";
  s.blocks = {{true, {100, 101}, {108, 107}}, {false, {99}, {}}};
  PairedSeries t;
  t.key = {"core", "BM_Sort/1024", "items_per_second"};
  t.direction = Direction::kHigherIsBetter;
  t.blocks = {{false, {5e6}, {4.6e6}}, {true, {5.1e6}, {4.7e6}}};
  m.series = {s, t};
  return m;
}

TEST(WirePaired, EncodeThenDecodeGivesTheMeasurementBack) {
  const PairedMeasurement m = Sample();
  auto decoded = DecodePairedMeasurement(EncodePairedMeasurement(m));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, m);
}

TEST(WirePaired, TheCommitIsLoweredAndTheParametersMayBeLeftOut) {
  json body = json::parse(EncodePairedMeasurement(Sample()));
  body["baseline_commit"] = std::string(40, 'A');
  body.erase("parameters");
  auto decoded = DecodePairedMeasurement(body.dump());
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(decoded->baseline_commit, std::string(40, 'a'));
  EXPECT_EQ(decoded->parameters, VerdictRequest{});
}

// Each edit of a valid body, and the field and message its rejection names.
struct BadCase {
  std::string name;
  std::function<void(json&)> edit;
  std::string field;
  std::string message;
};

TEST(WirePaired, EveryRejectionNamesItsField) {
  const std::vector<BadCase> cases = {
      {"unknown top key", [](json& b) { b["baseline"] = 1; }, "baseline", "unknown key (known: "},
      {"missing commit", [](json& b) { b.erase("baseline_commit"); }, "baseline_commit", "missing"},
      {"bad commit", [](json& b) { b["baseline_commit"] = "abc"; }, "baseline_commit",
       "not a commit sha"},
      {"bad testbed name", [](json& b) { b["testbed"]["name"] = "a b"; }, "testbed.name",
       "characters from"},
      {"bad threshold", [](json& b) { b["parameters"]["threshold"] = -1; }, "parameters.threshold",
       ""},
      {"unknown design key", [](json& b) { b["design"]["blocks"] = 3; }, "design.blocks",
       "unknown key"},
      {"too few blocks", [](json& b) { b["design"]["min_blocks"] = 2; }, "design.min_blocks",
       "at least 3"},
      {"max under min", [](json& b) { b["design"]["max_blocks"] = 5; }, "design.max_blocks",
       "at least 6"},
      {"growth", [](json& b) { b["design"]["growth"] = 1.0; }, "design.growth", "(1, 10]"},
      {"test", [](json& b) { b["design"]["test"] = "welch"; }, "design.test", "\"t\""},
      {"stopped", [](json& b) { b["design"]["stopped"] = "bored"; }, "design.stopped",
       "time_budget"},
      {"no series", [](json& b) { b["series"] = json::array(); }, "series", "at least one"},
      {"series key", [](json& b) { b["series"][0]["values"] = json::array(); }, "series[0].values",
       "unknown key"},
      {"direction", [](json& b) { b["series"][1]["direction"] = "up"; }, "series[1].direction",
       "\"lower\" or \"higher\""},
      {"no blocks", [](json& b) { b["series"][0]["blocks"] = json::array(); }, "series[0].blocks",
       "at least one block"},
      {"block key", [](json& b) { b["series"][0]["blocks"][1]["order"] = 1; },
       "series[0].blocks[1].order", "unknown key"},
      {"missing side", [](json& b) { b["series"][0]["blocks"][0].erase("head"); },
       "series[0].blocks[0].head", "missing"},
      {"string value", [](json& b) { b["series"][0]["blocks"][0]["head"][1] = "7"; },
       "series[0].blocks[0].head[1]", "expected a number, got a string"},
      {"duplicate series", [](json& b) { b["series"][1] = b["series"][0]; }, "series[1]",
       "same as series[0]"},
      {"blocks past the design",
       [](json& b) {
         b["design"]["max_blocks"] = 6;
         b["design"]["min_blocks"] = 3;
         for (int i = 0; i < 5; ++i)
           b["series"][0]["blocks"].push_back(b["series"][0]["blocks"][0]);
       },
       "series[0].blocks", "more blocks than design.max_blocks (6)"},
  };
  const json valid = json::parse(EncodePairedMeasurement(Sample()));
  for (const BadCase& c : cases) {
    json body = valid;
    c.edit(body);
    auto decoded = DecodePairedMeasurement(body.dump());
    ASSERT_FALSE(decoded.has_value()) << c.name;
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument) << c.name;
    EXPECT_EQ(decoded.error().field, c.field) << c.name << ": " << decoded.error().ToString();
    EXPECT_NE(decoded.error().message.find(c.message), std::string::npos)
        << c.name << ": " << decoded.error().ToString();
  }
}

// Each block, then each series, is decoded as soon as it is read: a bad first block is the answer
// even when the rest of the body is not JSON at all, and one block's DOM is bounded.
TEST(WirePaired, BlocksAreDecodedAsTheBodyIsRead) {
  std::string text = json::parse(EncodePairedMeasurement(Sample())).dump();
  const std::string head = text.substr(0, text.find("\"series\""));
  Result<PairedMeasurement> early =
      DecodePairedMeasurement(head + R"("series": [{"blocks": [{}, {}, {} and no more JSON)");
  ASSERT_FALSE(early.has_value());
  EXPECT_EQ(early.error().field, "series[0].blocks[0].base");
  EXPECT_EQ(early.error().message, "missing");
  DecodeLimits limits;
  limits.max_values = 10;
  const std::string ones = json(std::vector<int>(500, 1)).dump();
  Result<PairedMeasurement> big = DecodePairedMeasurement(
      head + R"("series": [{"blocks": [{"base": )" + ones + "}]}]}", limits);
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().field, "series[0].blocks[0].base[82]");
  EXPECT_EQ(big.error().message, "an element of series[*].blocks holds more than 84 JSON values");
  Result<PairedMeasurement> array = DecodePairedMeasurement("[{}, {}, {} and no more JSON");
  ASSERT_FALSE(array.has_value());
  EXPECT_EQ(array.error().message, "the body must be a JSON object, got an array");
}

TEST(WirePaired, NonFiniteValuesAndMalformedTextAreRefused) {
  std::string text = EncodePairedMeasurement(Sample());
  const size_t at = text.find("108");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 3, "1e999");
  auto decoded = DecodePairedMeasurement(text);
  ASSERT_FALSE(decoded.has_value());
  EXPECT_FALSE(DecodePairedMeasurement("{").has_value());
  EXPECT_FALSE(DecodePairedMeasurement("[]").has_value());
  // A duplicate key anywhere is refused by the strict reader.
  EXPECT_FALSE(
      DecodePairedMeasurement(R"({"baseline_commit": "a", "baseline_commit": "b"})").has_value());
}

}  // namespace
}  // namespace perfwarden::wire
