// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts` without a server: the renderings of hand-written server answers, decoded as
// the runner decodes them (wire/alert.h): grouping by commit range, the environment label, CI
// formatting, optional fields missing or null, the excerpt's first-bad marker, Markdown escaping.
// The decoders' refusals are tests/unit/wire/wire_alert_test.cc; the verb through the built
// executable is runner/cli/alerts_cli_test.cc.
#include "runner/report/alerts_render.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/alert_samples.h"
#include "wire/alert.h"

namespace perfwarden::report {
namespace {

using nlohmann::json;

// The answer as `perfwarden alerts` decodes it; a failure (and a default value) when it does not.
template <class T>
T Decoded(Result<T> decoded, const json& answer) {
  if (!decoded) {
    ADD_FAILURE() << decoded.error().ToString() << "\n" << answer.dump();
    return T{};
  }
  return *decoded;
}
wire::Alert AsAlert(const json& a) { return Decoded(wire::DecodeAlert(a.dump()), a); }
wire::AlertDetail AsDetail(const json& a) { return Decoded(wire::DecodeAlertDetail(a.dump()), a); }
wire::AlertPage AsPage(const json& p) { return Decoded(wire::DecodeAlertPage(p.dump()), p); }
wire::AlertSummary AsSummary(const json& s) {
  return Decoded(wire::DecodeAlertSummary(s.dump()), s);
}

const std::string kGood = "3b18e512dba7c0ffee0000000000000000000001";
const std::string kBad = "9f2c4d1e0a11c0ffee0000000000000000000002";
const std::string kGood2 = "aaaaaaaaaaaa0000000000000000000000000003";
const std::string kBad2 = "bbbbbbbbbbbb0000000000000000000000000004";

json Commit(const std::string& sha, const std::string& subject) {
  return {{"sha", sha},
          {"subject", subject},
          {"author", "Ada Lovelace"},
          {"time", "2026-11-20T10:00:00Z"},
          {"run_id", "6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3"}};
}

json Alert(int id, const std::string& benchmark, const std::string& good, const std::string& bad) {
  return {{"id", id},
          {"project", "demo"},
          {"series",
           {{"branch", "main"},
            {"testbed", "ci-1"},
            {"suite", "gbench_sample"},
            {"benchmark", benchmark},
            {"metric", "real_time"},
            {"unit", "ns"},
            {"direction", "lower"}}},
          {"kind", "regression"},
          {"cause", "code"},
          {"state", "open"},
          {"position", 17},
          {"range",
           {{"last_good", Commit(good, "Bump version")},
            {"first_bad", Commit(bad, "Sort: insertion sort below 32")}}},
          {"group", good.substr(0, 12) + ".." + bad.substr(0, 12)},
          {"group_id", 3},
          {"magnitude", 0.081},
          {"ci", {0.072, 0.090}},
          {"confidence", 0.95},
          {"p_value", 1e-6},
          {"q_value", 2e-5},
          {"level_before", 1000.0},
          {"level_after", 1081.0},
          {"detectors", {"e-divisive", "cusum"}},
          {"environment_change", nullptr},
          {"parameters", json::object()},
          {"note", ""},
          {"state_changed_by", nullptr},
          {"state_changed_at", nullptr},
          {"created_at", "2026-11-21T08:00:00Z"}};
}

json Page(std::vector<json> alerts, json next = nullptr) {
  return {{"alerts", alerts}, {"next_cursor", next}};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool Contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(AlertsRenderTest, ChangeWithConfidenceInterval) {
  json a = Alert(12, "BM_Sort/1024", kGood, kBad);
  EXPECT_EQ(FormatAlertChange(AsAlert(a)), "+8.1% [+7.2%, +9.0%]");
  a["magnitude"] = -0.25;
  a["ci"] = {-0.3, -0.2};
  EXPECT_EQ(FormatAlertChange(AsAlert(a)), "-25.0% [-30.0%, -20.0%]");
  a["ci"] = nullptr;
  EXPECT_EQ(FormatAlertChange(AsAlert(a)), "-25.0%");
  a.erase("ci");
  EXPECT_EQ(FormatAlertChange(AsAlert(a)), "-25.0%");
  a["magnitude"] = 0.0001;  // tiny changes keep a significant digit
  EXPECT_EQ(FormatAlertChange(AsAlert(a)), "+0.01%");
  // A bound that is not finite (the server writes none) is left out rather than half printed;
  // a malformed "ci" or "magnitude" is refused by the decoder (wire_alert_test.cc).
  wire::Alert typed = AsAlert(a);
  typed.ci = wire::Interval{0.1, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(FormatAlertChange(typed), "+0.01%");
}

TEST(AlertsRenderTest, EnvironmentCauseIsLabelledAsSuch) {
  json a = Alert(1, "BM_A", kGood, kBad);
  EXPECT_EQ(AlertKindLabel(AsAlert(a)), "regression");
  a["kind"] = "improvement";
  EXPECT_EQ(AlertKindLabel(AsAlert(a)), "improvement");
  a["cause"] = "environment";
  EXPECT_EQ(AlertKindLabel(AsAlert(a)), "environment");
  EXPECT_EQ(AlertKindLabel(wire::Alert{}), "-");
}

TEST(AlertsRenderTest, RangeKeyFromGroupOrCommits) {
  json a = Alert(1, "BM_A", kGood, kBad);
  EXPECT_EQ(AlertRangeKey(AsAlert(a)), "3b18e512dba7..9f2c4d1e0a11");
  a.erase("group");
  EXPECT_EQ(AlertRangeKey(AsAlert(a)), "3b18e512dba7..9f2c4d1e0a11");
  a["range"]["last_good"] = nullptr;
  EXPECT_EQ(AlertRangeKey(AsAlert(a)), "(first point)..9f2c4d1e0a11");
}

TEST(AlertsRenderTest, BisectCommand) {
  json a = Alert(1, "BM_Sort/1024", kGood, kBad);
  EXPECT_EQ(BisectCommand(AsAlert(a)), "perfwarden bisect --good " + kGood + " --bad " + kBad +
                                           " --benchmark BM_Sort/1024 --metric real_time");
  a["series"]["benchmark"] = "BM_Map<int, it's>/8";
  EXPECT_TRUE(Contains(BisectCommand(AsAlert(a)), "--benchmark 'BM_Map<int, it'\\''s>/8' --metric"))
      << BisectCommand(AsAlert(a));
  a["range"]["last_good"] = nullptr;
  EXPECT_EQ(BisectCommand(AsAlert(a)), "");
}

TEST(AlertsRenderTest, ListGroupsByCommitRange) {
  // Newest first as the server sends them; alerts 12 and 10 share a range, 11 has its own.
  json env = Alert(11, "BM_Hash", kGood2, kBad2);
  env["cause"] = "environment";
  const json page =
      Page({Alert(12, "BM_Sort/1024", kGood, kBad), env, Alert(10, "BM_Sort/64", kGood, kBad)});
  const std::string text = RenderAlertListText(AsPage(page));
  const std::vector<std::string> lines = Lines(text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "3 alerts in 2 commit ranges");

  const size_t first = text.find("3b18e512dba7..9f2c4d1e0a11");
  const size_t second = text.find("aaaaaaaaaaaa..bbbbbbbbbbbb");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second) << "groups keep the order of their newest alert\n" << text;
  EXPECT_EQ(text.find("3b18e512dba7..9f2c4d1e0a11", first + 1), std::string::npos)
      << "one heading per range\n"
      << text;
  // Both alerts of the first range sit between the two headings; the environment alert after.
  const size_t row12 = text.find("\n  12 ");
  const size_t row10 = text.find("\n  10 ");
  const size_t row11 = text.find("\n  11 ");
  EXPECT_TRUE(first < row12 && row12 < second) << text;
  EXPECT_TRUE(first < row10 && row10 < second) << text;
  EXPECT_GT(row11, second) << text;
  EXPECT_LT(row12, row10) << text;

  EXPECT_TRUE(Contains(text, "(branch main, testbed ci-1)")) << text;
  EXPECT_TRUE(Contains(text, "first bad: 9f2c4d1 Sort: insertion sort below 32 (Ada Lovelace"))
      << text;
  EXPECT_TRUE(Contains(text, "last good: 3b18e51 Bump version")) << text;
  EXPECT_TRUE(Contains(text, "CHANGE [95% CI]")) << text;
  EXPECT_TRUE(Contains(text, "+8.1% [+7.2%, +9.0%]")) << text;
  EXPECT_TRUE(Contains(text, "gbench_sample/BM_Sort/1024")) << text;
  EXPECT_TRUE(Contains(text, "1e-6")) << text;
  EXPECT_TRUE(Contains(text, "2e-5")) << text;
  EXPECT_TRUE(Contains(text, "e-divisive,cusum")) << text;
  // The environment alert says so in its kind column.
  const std::string row11_line = text.substr(row11 + 1, text.find('\n', row11 + 1) - row11 - 1);
  EXPECT_TRUE(Contains(row11_line, "environment")) << row11_line;
  EXPECT_FALSE(Contains(row11_line, "regression")) << row11_line;
  EXPECT_FALSE(Contains(text, "--all")) << "no next_cursor, no hint";
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing blank: '" << line << "'";
  }
}

TEST(AlertsRenderTest, ListColumnsAlign) {
  json long_id = Alert(12345, "BM_Sort/1024", kGood, kBad);
  const std::string text =
      RenderAlertListText(AsPage(Page({Alert(7, "BM_A", kGood, kBad), long_id})));
  const std::vector<std::string> lines = Lines(text);
  size_t header = 0;
  while (header < lines.size() && !Contains(lines[header], "STATE")) ++header;
  ASSERT_LT(header + 2, lines.size()) << text;
  const size_t column = lines[header].find("STATE");
  EXPECT_EQ(lines[header + 1].find("open"), column) << text;
  EXPECT_EQ(lines[header + 2].find("open"), column) << text;
}

TEST(AlertsRenderTest, ListSeveralTestbedsGetAColumn) {
  json other = Alert(13, "BM_Sort/1024", kGood, kBad);
  other["series"]["testbed"] = "gpu-h100";
  const std::string text =
      RenderAlertListText(AsPage(Page({Alert(12, "BM_Sort/1024", kGood, kBad), other})));
  EXPECT_TRUE(Contains(text, "TESTBED")) << text;
  EXPECT_TRUE(Contains(text, "gpu-h100")) << text;
  EXPECT_TRUE(Contains(text, "(branch main)")) << text;
}

TEST(AlertsRenderTest, ListEmptyAndPaged) {
  EXPECT_EQ(RenderAlertListText(AsPage(Page({}))), "no alerts\n");
  EXPECT_TRUE(Contains(RenderAlertListMarkdown(AsPage(Page({}))), "No alerts."));
  const std::string text = RenderAlertListText(AsPage(Page({Alert(1, "BM_A", kGood, kBad)}, "c2")));
  EXPECT_TRUE(Contains(text, "pass --all, or --cursor c2")) << text;
  EXPECT_TRUE(Contains(RenderAlertListMarkdown(AsPage(Page({Alert(1, "BM_A", kGood, kBad)}, "c2"))),
                       "More alerts on the server (next cursor `c2`)."));
  // A page that is not an object, or has no alerts array, is refused with the key at fault
  // rather than listed as empty (`perfwarden alerts` exits 3 naming it).
  EXPECT_FALSE(wire::DecodeAlertPage(json("oops").dump()).has_value());
  auto no_array = wire::DecodeAlertPage(json{{"alerts", 3}}.dump());
  ASSERT_FALSE(no_array.has_value());
  EXPECT_EQ(no_array.error().field, "alerts");
}

TEST(AlertsRenderTest, FirstPointOfASeriesHasNoLastGood) {
  json a = Alert(5, "BM_A", kGood, kBad);
  a["range"]["last_good"] = nullptr;
  a.erase("group");
  a["ci"] = nullptr;
  a["q_value"] = nullptr;
  const std::string list = RenderAlertListText(AsPage(Page({a})));
  EXPECT_TRUE(Contains(list, "(first point)..9f2c4d1e0a11")) << list;
  EXPECT_TRUE(Contains(list, "last good: none")) << list;
  EXPECT_TRUE(Contains(list, "CHANGE [95% CI]")) << list;
  const std::string show = RenderAlertText(AsDetail(a));
  EXPECT_TRUE(Contains(show, "no bisect")) << show;
  EXPECT_FALSE(Contains(show, "perfwarden bisect")) << show;
  EXPECT_TRUE(Contains(show, "+8.1%")) << show;
  EXPECT_FALSE(Contains(show, "[+")) << show;
  EXPECT_TRUE(Contains(RenderAlertMarkdown(AsDetail(a)), "none"))
      << RenderAlertMarkdown(AsDetail(a));
}

json Detailed() {
  json a = Alert(12, "BM_Sort/1024", kGood, kBad);
  a["cause"] = "environment";
  a["environment_change"] = {{"changed", {"cpu_model", "kernel"}},
                             {"before", {{"cpu_model", "Xeon 8375C"}, {"kernel", "6.1"}}},
                             {"after", {{"cpu_model", "EPYC 7763"}, {"kernel", "6.8"}}}};
  a["excerpt"] = json::array();
  const std::vector<std::pair<std::string, double>> points = {
      {"1111111aaaa", 999.5}, {kGood, 1000.2}, {kBad, 1081.0}, {"2222222bbbb", 1080.4}};
  for (size_t i = 0; i < points.size(); ++i) {
    a["excerpt"].push_back({{"position", 15 + static_cast<int>(i)},
                            {"sha", points[i].first},
                            {"subject", "commit " + std::to_string(i)},
                            {"level", points[i].second},
                            {"values", {points[i].second, points[i].second + 1, 1}},
                            {"run_id", "r" + std::to_string(i)},
                            {"testbed_fingerprint_changed", i == 2}});
  }
  a["history"] = {{{"state", "open"}, {"note", ""}, {"by", "server"}, {"at", "2026-11-21T08:00Z"}},
                  {{"state", "acknowledged"},
                   {"note", "looking at it"},
                   {"by", "alice"},
                   {"at", "2026-11-22T09:00Z"}}};
  a["state"] = "acknowledged";
  a["state_changed_by"] = "alice";
  a["state_changed_at"] = "2026-11-22T09:00Z";
  return a;
}

TEST(AlertsRenderTest, ShowText) {
  const std::string text = RenderAlertText(AsDetail(Detailed()));
  const std::vector<std::string> lines = Lines(text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "alert 12: environment +8.1% [+7.2%, +9.0%] (95% CI)");
  EXPECT_TRUE(Contains(text, "acknowledged (by alice, 2026-11-22T09:00Z)")) << text;
  EXPECT_TRUE(Contains(text, "gbench_sample/BM_Sort/1024 real_time")) << text;
  EXPECT_TRUE(Contains(text, "1000.0 ns -> 1081.0 ns")) << text;
  EXPECT_TRUE(Contains(text, "ns, lower is better")) << text;
  EXPECT_TRUE(Contains(text, "1e-6 / 2e-5")) << text;
  EXPECT_TRUE(Contains(text, "e-divisive, cusum")) << text;
  EXPECT_TRUE(Contains(text, "9f2c4d1 Sort: insertion sort below 32 (Ada Lovelace")) << text;
  EXPECT_TRUE(Contains(text, "3b18e51 Bump version")) << text;
  EXPECT_TRUE(Contains(text, "cpu_model: Xeon 8375C -> EPYC 7763")) << text;
  EXPECT_TRUE(Contains(text, "kernel: 6.1 -> 6.8")) << text;
  EXPECT_TRUE(Contains(text, "looking at it")) << text;
  EXPECT_TRUE(Contains(text, "perfwarden bisect --good " + kGood + " --bad " + kBad +
                                 " --benchmark BM_Sort/1024 --metric real_time"))
      << text;
  // Exactly one excerpt row carries the marker: the first bad commit's.
  int marked = 0;
  for (const std::string& line : lines) {
    if (line.rfind("  >", 0) != 0) continue;
    ++marked;
    EXPECT_TRUE(Contains(line, "9f2c4d1")) << line;
    EXPECT_TRUE(Contains(line, "17")) << line;
    EXPECT_TRUE(Contains(line, "1081.0")) << line;
    EXPECT_TRUE(Contains(line, "first bad, testbed changed")) << line;
  }
  EXPECT_EQ(marked, 1) << text;
  EXPECT_TRUE(Contains(text, "LEVEL (ns)")) << text;
}

TEST(AlertsRenderTest, ShowMarkdown) {
  json a = Detailed();
  a["series"]["benchmark"] = "BM_Pipe|Bar<*>";
  const std::string md = RenderAlertMarkdown(AsDetail(a));
  EXPECT_TRUE(Contains(md, "**>**")) << md;
  EXPECT_TRUE(Contains(md, "**Environment change**")) << md;
  EXPECT_TRUE(Contains(md, "```sh\nperfwarden bisect")) << md;
  // Every table row keeps its cell count whatever the names hold.
  for (const std::string& line : Lines(md)) {
    if (line.empty() || line[0] != '|') continue;
    int pipes = 0;
    for (size_t i = 0; i < line.size(); ++i)
      pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_TRUE(pipes == 3 || pipes == 8) << line;
  }
}

TEST(AlertsRenderTest, ListMarkdownEscapesAndKeepsCells) {
  json a = Alert(12, "BM_Pipe|Bar<*>", kGood, kBad);
  a["cause"] = "environment";
  const std::string md = RenderAlertListMarkdown(AsPage(Page({a, Alert(10, "BM_B", kGood, kBad)})));
  EXPECT_TRUE(Contains(md, "#### `3b18e512dba7..9f2c4d1e0a11`")) << md;
  EXPECT_TRUE(Contains(md, "**environment**")) << md;
  EXPECT_TRUE(Contains(md, "BM\\_Pipe\\|Bar\\<\\*>")) << md;
  EXPECT_TRUE(Contains(md, "Change [95% CI]")) << md;
  for (const std::string& line : Lines(md)) {
    if (line.empty() || line[0] != '|') continue;
    int pipes = 0;
    for (size_t i = 0; i < line.size(); ++i)
      pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(pipes, 10) << line;
  }
}

TEST(AlertsRenderTest, ControlCharactersCannotReachTheTerminal) {
  json a = Alert(12, "BM_\x1b[31mred\nx", kGood, kBad);
  a["range"]["first_bad"]["subject"] = "evil\r\x1b]0;title\x07";
  for (const std::string& text : {RenderAlertListText(AsPage(Page({a}))),
                                  RenderAlertText(AsDetail(a)), RenderTriageText(AsAlert(a))}) {
    for (char c : text) {
      const auto u = static_cast<unsigned char>(c);
      EXPECT_TRUE(c == '\n' || (u >= 0x20 && u != 0x7f)) << static_cast<int>(u);
    }
  }
}

// A mistyped answer never reaches the renderers: the decoder refuses it naming the first key at
// fault (wire_alert_test.cc has one case per key), and what an answer leaves out renders as "-".
TEST(AlertsRenderTest, MistypedFieldsAreRefusedAndEmptyOnesRender) {
  const json weird = {{"id", "12"},
                      {"series", json::array()},
                      {"range", "x"},
                      {"magnitude", "big"},
                      {"ci", "wide"},
                      {"detectors", "all"},
                      {"excerpt", {1, json::object(), nullptr}},
                      {"history", {"x"}},
                      {"environment_change", {{"changed", 3}}},
                      {"p_value", true}};
  auto detail = wire::DecodeAlertDetail(weird.dump());
  ASSERT_FALSE(detail.has_value());
  EXPECT_EQ(detail.error().ToString(), "id: expected an integer, got a string");
  auto page = wire::DecodeAlertPage(Page({Alert(1, "BM_A", kGood, kBad), json(5)}).dump());
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().ToString(), "alerts[1]: expected an object, got a number");
  wire::AlertDetail empty;
  empty.alert.id = 12;
  EXPECT_NO_THROW(RenderAlertText(wire::AlertDetail{}));
  EXPECT_NO_THROW(RenderAlertMarkdown(empty));
  EXPECT_NO_THROW(RenderTriageText(empty.alert));
  EXPECT_NO_THROW(RenderAlertListText(wire::AlertPage{{empty.alert, wire::Alert{}}, ""}));
  EXPECT_NO_THROW(RenderAlertListMarkdown(wire::AlertPage{{empty.alert}, std::nullopt}));
  EXPECT_TRUE(Contains(RenderAlertText(empty), "alert 12:"));
  EXPECT_TRUE(Contains(RenderAlertText(empty), "first bad  -")) << RenderAlertText(empty);
}

TEST(AlertsRenderTest, TriageLine) {
  json a = Alert(12, "BM_Sort/1024", kGood, kBad);
  a["state"] = "false_positive";
  a["note"] = "noisy neighbour";
  EXPECT_EQ(RenderTriageText(AsAlert(a)),
            "alert 12 is now false_positive: regression +8.1% [+7.2%, +9.0%] in "
            "gbench_sample/BM_Sort/1024 real_time on ci-1 (3b18e512dba7..9f2c4d1e0a11)\n"
            "  note: noisy neighbour\n");
}

TEST(AlertsRenderTest, JsonPassesThrough) {
  const json page = Page({Alert(12, "BM_Sort/1024", kGood, kBad)}, "c2");
  const std::string text = RenderJson(page);
  EXPECT_EQ(json::parse(text), page);
  EXPECT_TRUE(Contains(text, "\n  \"alerts\": [")) << text;
  EXPECT_EQ(text.back(), '\n');
  // The decoded answer encoded again prints the same bytes: keys in byte order.
  EXPECT_EQ(RenderJson(wire::EncodeAlertPage(AsPage(page))), text);
}

TEST(RenderAlertText, ListsTheAlertsBisects) {
  json alert = Alert(12, "BM_Sort/1024", kGood, kBad);
  alert["bisects"] = {{{"id", 3},
                       {"state", "succeeded"},
                       {"culprit", "9f2c4d1e0a11c0ffee00000000000000000000b2"},
                       {"created_by", "oncall"},
                       {"created_at", "2026-11-23T10:00:00Z"}}};
  const std::string text = RenderAlertText(AsDetail(alert));
  EXPECT_TRUE(Contains(text, "bisects:\n  #3 succeeded: culprit 9f2c4d1e0a11 (by oncall)")) << text;
}

TEST(RenderAlertSummaryText, CountsAndTheFalsePositiveRate) {
  const json summary = {
      {"total", 6},
      {"by_state", {{"open", 3}, {"acknowledged", 1}, {"false_positive", 1}, {"resolved", 1}}},
      {"by_kind", {{"regression", 3}, {"improvement", 1}, {"creep", 2}}},
      {"by_cause", {{"code", 4}, {"environment", 0}}},
      {"triaged_regressions", 3},
      {"false_positive_rate", 1.0 / 3}};
  const std::string text = RenderAlertSummaryText(AsSummary(summary));
  EXPECT_TRUE(Contains(text, "alerts: 6 (open 3, acknowledged 1, false positive 1, resolved 1)"))
      << text;
  EXPECT_TRUE(Contains(text, "regressions 3, improvements 1, creeps 2, environment changes 0"))
      << text;
  EXPECT_TRUE(Contains(text, "false positives: 33.3%")) << text;
  const json none = {{"total", 0}, {"false_positive_rate", nullptr}};
  EXPECT_TRUE(Contains(RenderAlertSummaryText(AsSummary(none)), "none triaged yet"));
}

TEST(AlertsRenderTest, GroupsListShowAndTriage) {
  wire::AlertGroupDetail detail = testing::SampleAlertGroupDetail();
  const std::string list = RenderAlertGroupListText({{detail.group}, std::nullopt});
  EXPECT_EQ(
      list,
      "1 alert group\n"
      "GROUP  STATE  RANGE                       BRANCH  ALERTS  MEMBERS BY STATE        "
      "BISECT  FIRST BAD\n"
      "3      open   aaaaaaaaaaaa..bbbbbbbbbbbb  main    2       open 1, acknowledged 1  5    "
      "   Sort: insertion sort\n");
  EXPECT_EQ(RenderAlertGroupListText({}), "no alert groups\n");
  const std::string shown = RenderAlertGroupText(detail);
  EXPECT_TRUE(Contains(shown, "alert group 3 (open) in shop, branch main\n")) << shown;
  EXPECT_TRUE(Contains(shown, "2 alerts: open 1, acknowledged 1\n")) << shown;
  EXPECT_TRUE(Contains(shown, "most significant: alert 12")) << shown;
  EXPECT_TRUE(Contains(shown, "bisect: 5 (one per group)")) << shown;
  EXPECT_TRUE(Contains(shown, "\n13  acknowledged")) << shown;
  detail.group.bisect_id.reset();
  EXPECT_TRUE(Contains(RenderAlertGroupText(detail), "perfwarden bisect --group 3"));
  detail.group.state = "closed";
  detail.group.states = {{"open", 0}, {"resolved", 2}};
  EXPECT_EQ(RenderGroupTriageText(detail),
            "alert group 3 is now closed (aaaaaaaaaaaa..bbbbbbbbbbbb): resolved 2\n");
}

}  // namespace
}  // namespace perfwarden::report
