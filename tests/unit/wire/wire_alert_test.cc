// SPDX-License-Identifier: Apache-2.0
// Tests of the alert messages (wire/alert.h): each type survives Decode(Encode(x)) == x with every
// optional part present and with none; the decoders refuse mistyped and missing keys naming the
// key, ignore unknown ones and default absent ones; the PATCH body is read strictly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/alert_samples.h"
#include "wire/alert.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

template <class T, class Encode, class Decode>
void ExpectRoundTrip(const T& value, Encode encode, Decode decode, const std::string& what) {
  const std::string text = encode(value).dump();
  auto decoded = decode(text);
  ASSERT_TRUE(decoded.has_value()) << what << ": " << decoded.error().ToString();
  EXPECT_EQ(*decoded, value) << what << ": " << text;
  // Encoding what was decoded gives the same bytes.
  EXPECT_EQ(encode(*decoded).dump(), text) << what;
}

// The smallest alert a decoder accepts: its required keys.
Alert MinimalAlert() {
  Alert a;
  a.id = 1;
  a.kind = "improvement";
  a.state = "open";
  a.series.key = {"", "BM_A", "real_time"};
  return a;
}

TEST(WireAlert, AlertRoundTrips) {
  ExpectRoundTrip(testing::SampleAlert(), EncodeAlert, DecodeAlert, "every part");
  ExpectRoundTrip(MinimalAlert(), EncodeAlert, DecodeAlert, "no optional part");
  Alert empty_change = testing::SampleAlert();
  empty_change.environment_change = EnvironmentChange{};
  empty_change.parameters = ordered_json::object();
  ExpectRoundTrip(empty_change, EncodeAlert, DecodeAlert, "empty environment change");
}

TEST(WireAlert, AlertDetailRoundTrips) {
  ExpectRoundTrip(testing::SampleAlertDetail(), EncodeAlertDetail, DecodeAlertDetail, "every part");
  ExpectRoundTrip(AlertDetail{MinimalAlert(), {}, {}, {}}, EncodeAlertDetail, DecodeAlertDetail,
                  "no excerpt, history or bisects");
  AlertDetail no_culprit = testing::SampleAlertDetail();
  no_culprit.bisects[0].culprit.reset();
  no_culprit.excerpt[0].commit.time.reset();
  ExpectRoundTrip(no_culprit, EncodeAlertDetail, DecodeAlertDetail, "null culprit and time");
}

TEST(WireAlert, PageSummaryAndChangePointsRoundTrip) {
  ExpectRoundTrip(testing::SampleAlertPage(), EncodeAlertPage, DecodeAlertPage, "page");
  ExpectRoundTrip(AlertPage{}, EncodeAlertPage, DecodeAlertPage, "empty last page");
  ExpectRoundTrip(testing::SampleAlertSummary(), EncodeAlertSummary, DecodeAlertSummary, "summary");
  ExpectRoundTrip(AlertSummary{}, EncodeAlertSummary, DecodeAlertSummary, "nothing triaged");
  ExpectRoundTrip(testing::SampleChangePoints(), EncodeChangePoints, DecodeChangePoints,
                  "change points");
  ChangePoints none = testing::SampleChangePoints();
  none.change_points.clear();
  ExpectRoundTrip(none, EncodeChangePoints, DecodeChangePoints, "no change points");
}

TEST(WireAlert, TheUpdateRoundTripsThroughTheServersDecoder) {
  for (const AlertUpdate& update :
       {AlertUpdate{"resolved", std::nullopt}, AlertUpdate{std::nullopt, "why"},
        AlertUpdate{"false_positive", ""}}) {
    auto decoded = DecodeAlertUpdate(json::parse(EncodeAlertUpdate(update).dump()));
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, update);
  }
  EXPECT_EQ(EncodeAlertUpdate({"open", "n"}).dump(), R"({"state":"open","note":"n"})");
}

TEST(WireAlert, GroupsRoundTripAndKeepTheirKeyOrder) {
  const AlertGroupDetail detail = testing::SampleAlertGroupDetail();
  auto decoded = DecodeAlertGroupDetail(EncodeAlertGroupDetail(detail).dump());
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, detail);
  AlertGroupPage page;
  page.groups = {detail.group, detail.group};
  page.groups[1].id = 4;
  page.groups[1].bisect_id.reset();
  page.next_cursor = "4";
  auto page_back = DecodeAlertGroupPage(EncodeAlertGroupPage(page).dump());
  ASSERT_TRUE(page_back.has_value()) << page_back.error().ToString();
  EXPECT_EQ(*page_back, page);
  const ordered_json group = EncodeAlertGroup(detail.group);
  std::string keys;
  for (auto it = group.begin(); it != group.end(); ++it) keys += it.key() + " ";
  EXPECT_EQ(keys,
            "id project branch range state states member_count most_significant bisect_id "
            "created_at ");
  EXPECT_TRUE(EncodeAlertGroup(page.groups[1])["bisect_id"].is_null());
  // A member that is not an alert, and a group without its id, are refused by name.
  ordered_json bad = EncodeAlertGroupDetail(detail);
  bad["members"][0].erase("kind");
  auto refused = DecodeAlertGroupDetail(bad.dump());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().field, "members[0].kind");
  ordered_json no_id = EncodeAlertGroup(detail.group);
  no_id.erase("id");
  no_id["members"] = ordered_json::array();
  auto missing = DecodeAlertGroupDetail(no_id.dump());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().field, "id");
}

TEST(WireAlert, KeysComeInTheServersOrder) {
  const ordered_json alert = EncodeAlert(testing::SampleAlert());
  std::string keys;
  for (auto it = alert.begin(); it != alert.end(); ++it) keys += it.key() + " ";
  EXPECT_EQ(keys,
            "id project series kind cause state position range group group_id magnitude ci "
            "confidence "
            "p_value q_value level_before level_after detectors environment_change parameters "
            "note state_changed_by state_changed_at created_at ");
  EXPECT_EQ(alert["series"].dump(),
            R"({"branch":"main","testbed":"ci-1","suite":"gbench_sample","benchmark":)"
            R"("BM_Sort/1024","metric":"real_time","unit":"ns","direction":"higher"})");
  EXPECT_EQ(alert["environment_change"].begin().key(), "after");
  EXPECT_EQ(alert["parameters"].begin().key(), "seed") << "free-form objects keep their order";
  const ordered_json detail = EncodeAlertDetail(testing::SampleAlertDetail());
  EXPECT_EQ(detail["excerpt"][0].dump(),
            R"({"position":16,"sha":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","subject":)"
            R"("Bump version","author":"Ada Lovelace","time":"2026-11-20T10:00:00Z","run_id":)"
            R"("6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3","level":1000.5,"values":[1000.0,1001.0],)"
            R"("first_bad":false,"testbed_fingerprint_changed":false})");
  // Absent optionals are null, not left out.
  const ordered_json minimal = EncodeAlert(MinimalAlert());
  for (const char* key : {"ci", "environment_change", "state_changed_by", "state_changed_at"}) {
    EXPECT_TRUE(minimal[key].is_null()) << key;
  }
  EXPECT_TRUE(minimal["range"]["first_bad"]["time"].is_null());
  EXPECT_TRUE(EncodeAlertPage({})["next_cursor"].is_null());
  EXPECT_TRUE(EncodeAlertSummary({})["false_positive_rate"].is_null());
  // The change points' keys are in byte order, as the route has always written them.
  EXPECT_EQ(EncodeChangePoints(testing::SampleChangePoints()).begin().key(), "baseline_from");
}

TEST(WireAlert, UnknownKeysAreIgnoredAndAbsentOnesDefault) {
  json alert = json::parse(EncodeAlert(MinimalAlert()).dump());
  alert["a_newer_key"] = {{"x", 1}};
  alert.erase("range");
  alert.erase("confidence");
  alert["ci"] = nullptr;
  auto decoded = DecodeAlert(alert.dump());
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(decoded->range, AlertRange{});
  EXPECT_EQ(decoded->confidence, 0.95);
  EXPECT_FALSE(decoded->ci.has_value());
  auto page = DecodeAlertPage(R"({"alerts": []})");
  ASSERT_TRUE(page.has_value());
  EXPECT_FALSE(page->next_cursor.has_value());
}

struct BadCase {
  std::string json;
  std::string field;
  std::string message;  // a piece of it
};

void ExpectRefused(const Result<Alert>& decoded, const BadCase& c) {
  ASSERT_FALSE(decoded.has_value()) << c.json;
  EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument) << c.json;
  EXPECT_EQ(decoded.error().field, c.field) << c.json;
  EXPECT_NE(decoded.error().message.find(c.message), std::string::npos)
      << c.json << " -> " << decoded.error().message;
}

TEST(WireAlert, MistypedAndMissingKeysAreRefusedByName) {
  const json good = json::parse(EncodeAlertDetail(testing::SampleAlertDetail()).dump());
  auto with = [&](const json::json_pointer& at, json value) {
    json changed = good;
    if (value.is_discarded()) {
      changed[at.parent_pointer()].erase(at.back());
    } else {
      changed[at] = std::move(value);
    }
    return changed.dump();
  };
  const json missing(json::value_t::discarded);
  const BadCase cases[] = {
      {with(json::json_pointer("/id"), "12"), "id", "expected an integer, got a string"},
      {with(json::json_pointer("/id"), 0), "id", "must be at least 1"},
      {with(json::json_pointer("/id"), missing), "id", "missing"},
      {with(json::json_pointer("/kind"), missing), "kind", "missing"},
      {with(json::json_pointer("/state"), nullptr), "state", "must not be null"},
      {with(json::json_pointer("/series"), json::array()), "series", "expected an object"},
      {with(json::json_pointer("/series/metric"), missing), "series.metric", "missing"},
      {with(json::json_pointer("/series/direction"), "sideways"), "series.direction",
       "expected \"lower\" or \"higher\", got \"sideways\""},
      {with(json::json_pointer("/range"), "x"), "range", "expected an object, got a string"},
      {with(json::json_pointer("/range/first_bad/sha"), 7), "range.first_bad.sha",
       "expected a string"},
      {with(json::json_pointer("/magnitude"), "8%"), "magnitude", "expected a number"},
      {with(json::json_pointer("/magnitude"), nullptr), "magnitude", "must not be null"},
      {with(json::json_pointer("/ci"), {0.1}), "ci", "expected [lower, upper], got 1 elements"},
      {with(json::json_pointer("/ci"), "wide"), "ci", "expected an array"},
      {with(json::json_pointer("/ci/1"), nullptr), "ci[1]", "expected a number, got null"},
      {with(json::json_pointer("/p_value"), true), "p_value", "expected a number, got a boolean"},
      {with(json::json_pointer("/detectors"), "all"), "detectors", "expected an array"},
      {with(json::json_pointer("/detectors/1"), 3), "detectors[1]", "expected a string"},
      {with(json::json_pointer("/environment_change/changed"), 3), "environment_change.changed",
       "expected an array"},
      {with(json::json_pointer("/environment_change/before"), "x"), "environment_change.before",
       "expected an object"},
      {with(json::json_pointer("/parameters"), json::array()), "parameters", "expected an object"},
      {with(json::json_pointer("/state_changed_by"), 1), "state_changed_by", "expected a string"},
      {with(json::json_pointer("/excerpt/1"), 1), "excerpt[1]", "expected an object, got a number"},
      {with(json::json_pointer("/excerpt/0/values/1"), "x"), "excerpt[0].values[1]",
       "expected a number"},
      {with(json::json_pointer("/excerpt/0/first_bad"), 1), "excerpt[0].first_bad",
       "expected a boolean"},
      {with(json::json_pointer("/history"), {"x"}), "history[0]", "expected an object"},
      {with(json::json_pointer("/bisects/0/id"), missing), "bisects[0].id", "missing"},
      {with(json::json_pointer("/bisects/0/culprit"), 5), "bisects[0].culprit",
       "expected a string"},
  };
  for (const BadCase& c : cases) {
    auto detail = DecodeAlertDetail(c.json);
    ExpectRefused(detail ? Result<Alert>(detail->alert) : tl::unexpected(detail.error()), c);
  }
  // The PATCH answer (a bare alert) is read by the same rules.
  ExpectRefused(DecodeAlert(R"({"id": 3, "kind": "regression", "state": "open"})"),
                {"", "series", "missing"});
  ExpectRefused(DecodeAlert("[1]"), {"", "", "expected an object, got an array"});
  ExpectRefused(DecodeAlert("{\"id\": "), {"", "", "malformed alert JSON"});
}

TEST(WireAlert, PageSummaryAndChangePointsRefuseMistypedKeys) {
  auto page = DecodeAlertPage(R"({"alerts": 3})");
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().field, "alerts");
  EXPECT_EQ(page.error().message, "expected an array, got a number");
  page = DecodeAlertPage(R"({"next_cursor": "c2"})");
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().ToString(), "alerts: missing");
  page = DecodeAlertPage(R"({"alerts": [{"id": 1, "kind": "regression", "state": "open",
                                         "series": {"benchmark": "BM_A"}}]})");
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().ToString(), "alerts[0].series.metric: missing");
  page = DecodeAlertPage(R"({"alerts": [], "next_cursor": 2})");
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().field, "next_cursor");
  EXPECT_FALSE(DecodeAlertPage("\"oops\"").has_value());

  auto summary = DecodeAlertSummary(R"({"by_state": {}})");
  ASSERT_FALSE(summary.has_value());
  EXPECT_EQ(summary.error().ToString(), "total: missing");
  summary = DecodeAlertSummary(R"({"total": 4, "by_state": {"open": "1"}})");
  ASSERT_FALSE(summary.has_value());
  EXPECT_EQ(summary.error().field, "by_state.open");
  summary = DecodeAlertSummary(R"({"total": 4, "false_positive_rate": "high"})");
  ASSERT_FALSE(summary.has_value());
  EXPECT_EQ(summary.error().field, "false_positive_rate");
  summary = DecodeAlertSummary(R"({"total": 0, "false_positive_rate": null})");
  ASSERT_TRUE(summary.has_value());
  EXPECT_FALSE(summary->false_positive_rate.has_value());

  json points = EncodeChangePoints(testing::SampleChangePoints());
  points["change_points"][0]["environment_change"] = "yes";
  auto decoded = DecodeChangePoints(points.dump());
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().field, "change_points[0].environment_change");
  points.erase("change_points");
  decoded = DecodeChangePoints(points.dump());
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().ToString(), "change_points: missing");
}

TEST(WireAlert, TheUpdateIsReadStrictly) {
  struct Case {
    json body;
    std::string field;
    std::string message;
  };
  const Case cases[] = {
      {json::object(), "state", "give a state, a note or both"},
      {{{"state", "closed"}},
       "state",
       "must be open, acknowledged, false_positive, resolved or went_away, got \"closed\""},
      {{{"state", 1}}, "state", "must be a string"},
      {{{"note", nullptr}}, "note", "must be a string"},
      {{{"note", std::string(4097, 'x')}}, "note", "longer than 4096 bytes"},
      {{{"state", "open"}, {"notes", "typo"}}, "notes", "unknown field (expected state, note)"},
      {json::array(), "", "the body must be a JSON object"},
  };
  for (const Case& c : cases) {
    auto decoded = DecodeAlertUpdate(c.body);
    ASSERT_FALSE(decoded.has_value()) << c.body.dump();
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(decoded.error().field, c.field) << c.body.dump();
    EXPECT_EQ(decoded.error().message, c.message) << c.body.dump();
  }
  auto longest = DecodeAlertUpdate({{"note", std::string(4096, 'x')}});
  EXPECT_TRUE(longest.has_value());
  for (std::string_view state : kAlertStates) {
    EXPECT_TRUE(IsAlertState(state));
    EXPECT_TRUE(DecodeAlertUpdate({{"state", std::string(state)}}).has_value()) << state;
  }
  EXPECT_FALSE(IsAlertState("all"));
}

}  // namespace
}  // namespace perfwarden::wire
