// SPDX-License-Identifier: Apache-2.0
// docs/openapi.yaml against the alert messages (wire/alert.h): each type's encoding, with every
// optional part present, names exactly the documented properties of its schema (Alert,
// HistorySeries, CommitRef, AlertDetail, AlertPage, AlertSummary, AlertUpdate, ChangePoints,
// AlertGroup, AlertGroupDetail, AlertGroupPage), and
// what the server maps from its records (server/history/alert_json.h) writes every documented key;
// a new field fails here until it is documented.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

#include "server/history/alert_json.h"
#include "tests/testing/alert_samples.h"
#include "tests/testing/openapi_schema.h"
#include "wire/alert.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

class OpenApiAlertTest : public OpenApiDocTest {
 protected:
  // The property names of an inline schema (one that is not under components/schemas).
  static Keys PropertiesOf(const YAML::Node& schema) { return KeysOf(schema["properties"]); }
  static Keys RequiredOf(const YAML::Node& schema) {
    Keys out;
    const YAML::Node required = schema["required"];
    if (!required.IsDefined()) return out;
    for (const auto& item : required) out.insert(item.as<std::string>());
    return out;
  }
  // The words a string schema's enum allows.
  static Keys EnumOf(const YAML::Node& schema) {
    Keys out;
    for (const auto& item : schema["enum"]) out.insert(item.as<std::string>());
    return out;
  }
  // The part of AlertDetail that GET .../alerts/{id} adds to an alert.
  const YAML::Node DetailPart() const { return Schema("AlertDetail")["allOf"][1]; }
};

TEST_F(OpenApiAlertTest, TheAlertTypesNameExactlyTheDocumentedKeys) {
  const json alert = json(wire::EncodeAlert(testing::SampleAlert()));
  // A creep alert has every documented key; "creep" is its own, not required of the others.
  const json creep = json(wire::EncodeAlert(testing::SampleCreepAlert()));
  EXPECT_EQ(KeysOf(creep), Properties("Alert"));
  EXPECT_EQ(KeysOf(alert), Required("Alert"));
  EXPECT_EQ(KeysOf(creep["creep"]), PropertiesOf(Schema("Alert")["properties"]["creep"]));
  EXPECT_EQ(KeysOf(creep["creep"]), RequiredOf(Schema("Alert")["properties"]["creep"]));
  EXPECT_EQ(EnumOf(Schema("Alert")["properties"]["kind"]),
            (Keys{"regression", "improvement", "creep"}));
  for (const json& detector : creep["detectors"]) {
    EXPECT_EQ(EnumOf(Schema("Alert")["properties"]["detectors"]["items"])
                  .count(detector.get<std::string>()),
              1u)
        << detector;
  }
  EXPECT_EQ(KeysOf(alert["series"]), Properties("HistorySeries"));
  EXPECT_EQ(KeysOf(alert["series"]), Required("HistorySeries"));
  const YAML::Node properties = Schema("Alert")["properties"];
  EXPECT_EQ(KeysOf(alert["range"]), PropertiesOf(properties["range"]));
  EXPECT_EQ(KeysOf(alert["range"]), RequiredOf(properties["range"]));
  for (const char* end : {"last_good", "first_bad"}) {
    EXPECT_EQ(KeysOf(alert["range"][end]), Properties("CommitRef")) << end;
    EXPECT_EQ(KeysOf(alert["range"][end]), Required("CommitRef")) << end;
  }
  EXPECT_EQ(KeysOf(alert["environment_change"]), PropertiesOf(properties["environment_change"]));
  for (const json& detector : alert["detectors"]) {
    EXPECT_EQ(EnumOf(properties["detectors"]["items"]).count(detector.get<std::string>()), 1u)
        << detector;
  }
  EXPECT_EQ(EnumOf(properties["state"]),
            Keys(std::begin(wire::kAlertStates), std::end(wire::kAlertStates)));
}

TEST_F(OpenApiAlertTest, TheDetailPageAndSummaryNameExactlyTheDocumentedKeys) {
  const json detail = json(wire::EncodeAlertDetail(testing::SampleAlertDetail()));
  Keys documented = Properties("Alert");
  documented.erase("creep");  // a step alert's detail; "creep" is a creep alert's own
  const Keys added = PropertiesOf(DetailPart());
  documented.insert(added.begin(), added.end());
  EXPECT_EQ(KeysOf(detail), documented);
  EXPECT_EQ(added, RequiredOf(DetailPart()));
  for (const char* part : {"excerpt", "history", "bisects"}) {
    ASSERT_FALSE(detail[part].empty()) << part;
    const YAML::Node items = DetailPart()["properties"][part]["items"];
    EXPECT_EQ(KeysOf(detail[part][0]), PropertiesOf(items)) << part;
    EXPECT_EQ(KeysOf(detail[part][0]), RequiredOf(items)) << part;
  }
  EXPECT_EQ(EnumOf(DetailPart()["properties"]["bisects"]["items"]["properties"]["state"]),
            EnumOf(Schema("Bisect")["properties"]["state"]))
      << "an alert lists its remote bisects too, in whatever state";

  const json page = json(wire::EncodeAlertPage(testing::SampleAlertPage()));
  EXPECT_EQ(KeysOf(page), Properties("AlertPage"));
  EXPECT_EQ(KeysOf(page), Required("AlertPage"));

  const json summary = json(wire::EncodeAlertSummary(testing::SampleAlertSummary()));
  EXPECT_EQ(KeysOf(summary), Properties("AlertSummary"));
  EXPECT_EQ(KeysOf(summary), Required("AlertSummary"));
  for (const char* counts : {"by_state", "by_kind", "by_cause"}) {
    EXPECT_EQ(KeysOf(summary[counts]), PropertiesOf(Schema("AlertSummary")["properties"][counts]))
        << counts;
  }
  EXPECT_EQ(KeysOf(summary["by_state"]),
            Keys(std::begin(wire::kAlertStates), std::end(wire::kAlertStates)));
}

TEST_F(OpenApiAlertTest, TheUpdateAndTheChangePointsNameExactlyTheDocumentedKeys) {
  const json update = json(wire::EncodeAlertUpdate({"resolved", "fixed by #12"}));
  EXPECT_EQ(KeysOf(update), Properties("AlertUpdate"));
  EXPECT_EQ(EnumOf(Schema("AlertUpdate")["properties"]["state"]),
            Keys(std::begin(wire::kAlertStates), std::end(wire::kAlertStates)));

  const json points = wire::EncodeChangePoints(testing::SampleChangePoints());
  EXPECT_EQ(KeysOf(points), Properties("ChangePoints"));
  EXPECT_EQ(KeysOf(points), Required("ChangePoints"));
  EXPECT_EQ(KeysOf(points["series"]), Properties("HistorySeries"));
  const YAML::Node item = Schema("ChangePoints")["properties"]["change_points"]["items"];
  ASSERT_FALSE(points["change_points"].empty());
  const json& step = points["change_points"][0];
  EXPECT_EQ(KeysOf(step), PropertiesOf(item));
  EXPECT_EQ(KeysOf(step), RequiredOf(item));
  EXPECT_EQ(KeysOf(step["last_good"]), Properties("CommitRef"));
  EXPECT_EQ(KeysOf(step["first_bad"]), Properties("CommitRef"));
}

TEST_F(OpenApiAlertTest, TheGroupsNameExactlyTheDocumentedKeys) {
  const json detail = json(wire::EncodeAlertGroupDetail(testing::SampleAlertGroupDetail()));
  const YAML::Node added = Schema("AlertGroupDetail")["allOf"][1];
  Keys documented = Properties("AlertGroup");
  const Keys more = PropertiesOf(added);
  documented.insert(more.begin(), more.end());
  EXPECT_EQ(KeysOf(detail), documented);
  EXPECT_EQ(more, RequiredOf(added));
  json group = detail;
  for (const std::string& key : more) group.erase(key);
  EXPECT_EQ(KeysOf(group), Required("AlertGroup"));
  const YAML::Node properties = Schema("AlertGroup")["properties"];
  EXPECT_EQ(KeysOf(detail["range"]), PropertiesOf(properties["range"]));
  EXPECT_EQ(KeysOf(detail["states"]), PropertiesOf(properties["states"]));
  EXPECT_EQ(KeysOf(detail["states"]),
            Keys(std::begin(wire::kAlertStates), std::end(wire::kAlertStates)));
  EXPECT_EQ(KeysOf(detail["states"]), RequiredOf(properties["states"]));
  ASSERT_FALSE(detail["bisects"].empty());
  EXPECT_EQ(KeysOf(detail["bisects"][0]), PropertiesOf(added["properties"]["bisects"]["items"]));
  EXPECT_EQ(KeysOf(detail["members"][0]), Required("Alert"));  // a step: no "creep"
  wire::AlertGroupPage page;
  page.groups = {testing::SampleAlertGroupDetail().group};
  const json listed = json(wire::EncodeAlertGroupPage(page));
  EXPECT_EQ(KeysOf(listed), Properties("AlertGroupPage"));
  EXPECT_EQ(KeysOf(listed), Required("AlertGroupPage"));
  // What the server maps from its records: every documented key, zero counts included.
  store::AlertGroupDetail record;
  record.group.states = {{"open", 2}};
  record.members.push_back({});
  record.bisects.push_back({});
  const json mapped = json(wire::EncodeAlertGroupDetail(server::history::ToWire(record)));
  EXPECT_EQ(KeysOf(mapped), documented);
  EXPECT_EQ(KeysOf(mapped["states"]), PropertiesOf(properties["states"]));
  EXPECT_EQ(mapped["states"]["went_away"], 0);
}

// What the server writes from its records, with as little as a record can hold.
TEST_F(OpenApiAlertTest, TheAlertSchemasNameEveryKeyTheServerWrites) {
  store::AlertDetail detail;
  detail.alert.ci_low = 0.07;
  detail.alert.ci_high = 0.09;
  detail.alert.environment_change_json = R"({"changed":["cpu_model"],"before":{},"after":{}})";
  detail.excerpt.push_back({});
  detail.history.push_back({"open", "", "perfwarden", "2026-01-01T00:00:00Z"});
  detail.bisects.push_back({});
  const json alert = json(wire::EncodeAlertDetail(server::history::ToWire(detail)));
  Keys documented = Properties("Alert");
  documented.erase("creep");  // written for a creep's record only (below)
  documented.insert("excerpt");
  documented.insert("history");
  documented.insert("bisects");
  EXPECT_EQ(KeysOf(alert), documented);
  EXPECT_EQ(Required("Alert").size() + 3, KeysOf(alert).size());
  detail.alert.creep = store::CreepFigures{40, 0.002, 0.001, 0.003};
  const json creep = json(wire::EncodeAlertDetail(server::history::ToWire(detail)));
  EXPECT_EQ(KeysOf(creep["creep"]), PropertiesOf(Schema("Alert")["properties"]["creep"]));
  EXPECT_EQ(KeysOf(alert["excerpt"][0]),
            PropertiesOf(DetailPart()["properties"]["excerpt"]["items"]));
  EXPECT_EQ(KeysOf(alert["environment_change"]),
            PropertiesOf(Schema("Alert")["properties"]["environment_change"]));
  const json summary = json(wire::EncodeAlertSummary(server::history::SummaryOf(
      {{"regression", "code", "false_positive", 1}, {"improvement", "environment", "open", 2}})));
  EXPECT_EQ(KeysOf(summary), Properties("AlertSummary"));
}

}  // namespace
}  // namespace perfwarden::server::api
