// SPDX-License-Identifier: Apache-2.0
// docs/openapi.yaml against wire/paired.h and the paired parts of wire/verdict.h: the paired
// measurement's encoding, with every optional part present, names exactly the documented
// properties of its schemas; its strict decoder accepts exactly the documented keys (its own
// "(known: ...)" lists are the schemas' properties) and refuses a missing required key naming
// it; and a verdict's "paired" summary and a row's "paired" detail name exactly theirs.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/openapi_schema.h"
#include "tests/testing/planted_paired.h"
#include "wire/paired.h"
#include "wire/verdict.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

class OpenApiPairedTest : public OpenApiDocTest {
 protected:
  // The schema of the measurement's series, and of one of their blocks.
  YAML::Node SeriesSchema() const {
    return Schema("PairedMeasurement")["properties"]["series"]["items"];
  }
  YAML::Node BlockSchema() const { return SeriesSchema()["properties"]["blocks"]["items"]; }
  YAML::Node TestbedSchema() const { return Schema("PairedMeasurement")["properties"]["testbed"]; }
};

// Every key present: amends, a fingerprint, a rule, a block that says which side ran first.
json FullMeasurement() {
  wire::PairedMeasurement m = testing::PlantedMeasurement(std::string(40, 'a'));
  m.amends = 3;
  return json::parse(wire::EncodePairedMeasurement(m));
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

TEST_F(OpenApiPairedTest, TheMeasurementNamesExactlyTheDocumentedKeys) {
  const json m = FullMeasurement();
  EXPECT_EQ(KeysOf(m), Properties("PairedMeasurement"));
  EXPECT_EQ(KeysOf(m["testbed"]), KeysOf(TestbedSchema()["properties"]));
  EXPECT_EQ(KeysOf(m["design"]), Properties("PairedDesign"));
  EXPECT_EQ(KeysOf(m["series"][0]), KeysOf(SeriesSchema()["properties"]));
  EXPECT_EQ(KeysOf(m["series"][0]["blocks"][0]), KeysOf(BlockSchema()["properties"]));
  for (const std::string& key : KeysOf(m["parameters"])) {
    EXPECT_EQ(Properties("VerdictRequest").count(key), 1u) << key;
  }
  EXPECT_TRUE(wire::DecodePairedMeasurement(m.dump()).has_value());
}

TEST_F(OpenApiPairedTest, TheStrictDecoderAcceptsExactlyTheDocumentedKeys) {
  struct Case {
    std::string where;  // the JSON pointer of the object, "" for the root
    std::string field;  // its path in the decoder's errors
    YAML::Node schema;
  };
  const std::vector<Case> cases = {
      {"", "", Schema("PairedMeasurement")},
      {"/testbed", "testbed", TestbedSchema()},
      {"/design", "design", Schema("PairedDesign")},
      {"/series/0", "series[0]", SeriesSchema()},
      {"/series/0/blocks/0", "series[0].blocks[0]", BlockSchema()},
  };
  const json valid = FullMeasurement();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    EXPECT_FALSE(c.schema["additionalProperties"].as<bool>(true));
    const std::string prefix = c.field.empty() ? "" : c.field + ".";
    json unknown = valid;
    unknown[json::json_pointer(c.where)]["undocumented"] = 1;
    auto refused = wire::DecodePairedMeasurement(unknown.dump());
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().field, prefix + "undocumented");
    EXPECT_EQ(KnownKeys(refused.error()), KeysOf(c.schema["properties"]))
        << refused.error().message;
    for (const auto& item : c.schema["required"]) {
      const std::string key = item.as<std::string>();
      json missing = valid;
      missing[json::json_pointer(c.where)].erase(key);
      auto incomplete = wire::DecodePairedMeasurement(missing.dump());
      ASSERT_FALSE(incomplete.has_value()) << key;
      EXPECT_EQ(incomplete.error().field, prefix + key);
    }
  }
}

TEST_F(OpenApiPairedTest, ThePairedPartsOfAVerdictNameExactlyTheDocumentedKeys) {
  wire::PairedSummary summary;
  summary.amends = 3;
  summary.geomean_change = 0.01;
  summary.geomean_ci = wire::Interval{0, 0.02};
  const json s = wire::EncodePairedSummary(summary);
  EXPECT_EQ(KeysOf(s), Properties("PairedSummary"));
  EXPECT_EQ(KeysOf(s), Required("PairedSummary"));
  EXPECT_EQ(KeysOf(s["design"]), Properties("PairedDesign"));

  wire::PairedDetail detail;
  detail.t_ci = detail.bootstrap_ci = wire::Interval{0.01, 0.02};
  const json d = wire::EncodePairedDetail(detail);
  EXPECT_EQ(KeysOf(d), Properties("PairedDetail"));
  EXPECT_EQ(KeysOf(d), Required("PairedDetail"));

  // UNSTABLE and its count are documented.
  bool unstable = false;
  for (const auto& word : Schema("VerdictResult")["properties"]["verdict"]["enum"]) {
    unstable |= word.as<std::string>() == "UNSTABLE";
  }
  EXPECT_TRUE(unstable);
  EXPECT_EQ(Properties("VerdictCounts").count("unstable"), 1u);
}

}  // namespace
}  // namespace perfwarden::server::api
