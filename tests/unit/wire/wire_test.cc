// Tests of the wire format v1 decoder: the fixtures in tests/fixtures/wire decode to the values
// they spell and survive Decode(Encode(x)) == x; a table of bad inputs, one per rule, each
// answered with kInvalidArgument naming the field and the problem; hostile nesting depth.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/oracle_csv.h"
#include "wire/run_upload.h"

namespace perfgate::wire {
namespace {

using ::nlohmann::json;
using ::perfgate::testing::FixturePath;
using ::perfgate::testing::ReadFile;

RunUpload MustDecode(const std::string& text, const DecodeLimits& limits = {}) {
  Result<RunUpload> run = DecodeRunUpload(text, limits);
  EXPECT_TRUE(run.has_value()) << (run ? "" : run.error().ToString());
  return run ? *run : RunUpload{};
}

std::string Fixture(const std::string& name) { return ReadFile(FixturePath("wire/" + name)); }

json Minimal() { return json::parse(Fixture("minimal.json")); }

// ---- valid uploads ---------------------------------------------------------------------------

TEST(WireDecode, FullFixtureDecodesEveryField) {
  const RunUpload run = MustDecode(Fixture("full.json"));
  EXPECT_EQ(run.id, "6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3");  // upper case accepted, stored lower
  EXPECT_EQ(run.project, "myproj");
  EXPECT_EQ(run.branch, "feature/faster-sort");
  EXPECT_EQ(run.commit.sha, "3b18e512dba79e4c8300dd08aeb37f8e728b8dad");
  ASSERT_EQ(run.commit.parents.size(), 1u);
  EXPECT_EQ(run.commit.parents[0], "9fceb02d0ae598e95dc970b74767f19372d61af8");
  EXPECT_EQ(run.commit.time, "2024-03-01T12:34:56+01:00");
  EXPECT_EQ(run.commit.subject, "Use pdqsort for BM_Sort");
  EXPECT_EQ(run.commit.author, "Ada Lovelace <ada@example.com>");
  EXPECT_EQ(run.merge_base, "9fceb02d0ae598e95dc970b74767f19372d61af8");
  EXPECT_EQ(run.target_branch, "main");
  EXPECT_EQ(run.ancestry.size(), 2u);
  EXPECT_EQ(run.testbed.name, "ci-x86-1");
  const json fingerprint = json::parse(run.testbed.fingerprint_json);
  EXPECT_EQ(fingerprint["cores"], 16);
  EXPECT_EQ(fingerprint["gpu"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(run.ci.provider, "github");
  EXPECT_EQ(run.ci.pr, 123);
  EXPECT_EQ(json::parse(run.ci.extra_json), json::parse(R"({"run_attempt":2,"workflow":"bench"})"));
  EXPECT_EQ(run.started_at, "2024-03-01T11:40:00.125Z");
  EXPECT_EQ(run.finished_at, "2024-03-01T11:52:13.5Z");
  ASSERT_EQ(run.results.size(), 3u);
  EXPECT_EQ(run.results[0].suite, "gbench_sample");
  EXPECT_EQ(run.results[0].benchmark, "BM_Sort/1024");
  EXPECT_EQ(run.results[0].metric, "real_time");
  EXPECT_EQ(run.results[0].unit, "ns");
  EXPECT_EQ(run.results[0].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(run.results[0].values, (std::vector<double>{1021.5, 1019.2, 1030.8}));
  EXPECT_EQ(run.results[1].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(run.results[1].values, (std::vector<double>{1.0025e6, 998000, 1.0041e6}));
  EXPECT_EQ(run.results[2].values[0], 0.0);  // zero is a valid time
  EXPECT_EQ(run.SampleCount(), 9u);
}

TEST(WireDecode, MinimalFixtureLeavesOptionalFieldsEmpty) {
  const RunUpload run = MustDecode(Fixture("minimal.json"));
  EXPECT_EQ(run.branch, "");
  EXPECT_TRUE(run.commit.parents.empty());
  EXPECT_EQ(run.commit.time, "");
  EXPECT_FALSE(run.merge_base.has_value());
  EXPECT_TRUE(run.ancestry.empty());
  EXPECT_EQ(run.testbed.fingerprint_json, "{}");
  EXPECT_EQ(run.ci, CiInfo{});
  EXPECT_EQ(run.started_at, "");
  EXPECT_EQ(run.results[0].unit, "");
}

TEST(WireDecode, NullOptionalFieldsReadAsAbsent) {
  json body = Minimal();
  body["branch"] = nullptr;
  body["merge_base"] = nullptr;
  body["ci"] = {{"pr", nullptr}, {"provider", "gitlab"}};
  body["started_at"] = nullptr;
  const RunUpload run = MustDecode(body.dump());
  EXPECT_EQ(run.branch, "");
  EXPECT_FALSE(run.merge_base.has_value());
  EXPECT_FALSE(run.ci.pr.has_value());
  EXPECT_EQ(run.ci.provider, "gitlab");
  EXPECT_EQ(run.ci.extra_json, "{}");
}

TEST(WireDecode, UpperCaseShasAreStoredLowerCase) {
  json body = Minimal();
  body["commit"]["sha"] = "9FCEB02D0AE598E95DC970B74767F19372D61AF8";
  body["ancestry"] = {"ABCDEF0123456789ABCDEF0123456789ABCDEF01"};
  const RunUpload run = MustDecode(body.dump());
  EXPECT_EQ(run.commit.sha, "9fceb02d0ae598e95dc970b74767f19372d61af8");
  EXPECT_EQ(run.ancestry[0], "abcdef0123456789abcdef0123456789abcdef01");
}

TEST(WireDecode, SqlLookingStringsAreJustData) {
  json body = Minimal();
  const std::string suite = "x'; DROP TABLE runs; --";
  const std::string benchmark = "Robert'); DROP TABLE samples;--";
  const std::string subject = "1' OR '1'='1\"; SELECT pg_sleep(10); /*";
  body["results"][0]["suite"] = suite;
  body["results"][0]["benchmark"] = benchmark;
  body["results"][0]["metric"] = "$1 \\x00 %s";
  body["commit"]["subject"] = subject;
  body["ci"] = {{"job_url", "';--"}, {"note", "DELETE FROM tokens"}};
  const RunUpload run = MustDecode(body.dump());
  EXPECT_EQ(run.results[0].suite, suite);
  EXPECT_EQ(run.results[0].benchmark, benchmark);
  EXPECT_EQ(run.results[0].metric, "$1 \\x00 %s");
  EXPECT_EQ(run.commit.subject, subject);
  EXPECT_EQ(run.ci.job_url, "';--");
  EXPECT_EQ(json::parse(run.ci.extra_json)["note"], "DELETE FROM tokens");
}

TEST(WireDecode, TimestampsAcceptTheWholeRfc3339Grammar) {
  for (const char* time : {"2024-02-29T23:59:60Z", "2000-02-29T00:00:00.123456789123-00:30",
                           "1999-12-31T23:59:59+23:59", "2024-01-01T00:00:00.5+00:00"}) {
    json body = Minimal();
    body["commit"]["time"] = time;
    EXPECT_EQ(MustDecode(body.dump()).commit.time, time);
  }
  // Ordered as instants, not as text: 12:00+02:00 is 10:00Z, before 11:00Z.
  json body = Minimal();
  body["started_at"] = "2024-03-01T12:00:00+02:00";
  body["finished_at"] = "2024-03-01T11:00:00Z";
  MustDecode(body.dump());
  body["finished_at"] = body["started_at"];
  MustDecode(body.dump());
}

TEST(WireDecode, NegativeValuesAreFineForNonTimeUnits) {
  json body = Minimal();
  body["results"][0]["unit"] = "%";
  body["results"][0]["values"] = {-3.5, 0, 2};
  EXPECT_EQ(MustDecode(body.dump()).results[0].values[0], -3.5);
}

TEST(WireDecode, LimitsAreInclusive) {
  DecodeLimits limits;
  limits.max_results = 1;
  limits.max_values = 3;
  limits.max_string = 40;  // a sha's length
  json body = Minimal();
  body["results"][0]["values"] = {1, 2, 3};
  body["commit"]["subject"] = std::string(40, 'x');
  MustDecode(body.dump(), limits);
}

// ---- round trip ------------------------------------------------------------------------------

TEST(WireEncode, RoundTripsTheFixtures) {
  for (const char* name : {"full.json", "minimal.json"}) {
    const RunUpload run = MustDecode(Fixture(name));
    const std::string encoded = EncodeRunUpload(run);
    EXPECT_EQ(MustDecode(encoded), run) << name << ": " << encoded;
    EXPECT_EQ(EncodeRunUpload(MustDecode(encoded)), encoded) << name;  // canonical: a fixed point
  }
}

TEST(WireEncode, RoundTripsAwkwardValues) {
  RunUpload run;
  run.id = "00000000-0000-4000-8000-000000000000";
  run.project = "p";
  run.commit.sha = std::string(40, 'a');
  run.commit.subject = "naïve \"quotes\" \\ tab\t newline\n emoji \xF0\x9F\x9A\x80";
  run.testbed.name = "t";
  run.testbed.fingerprint_json = R"({"a":[1,{"b":null}],"z":"y"})";
  run.ci.pr = std::numeric_limits<int64_t>::max();
  run.ci.extra_json = R"({"nested":{"k":[true,false]}})";
  ResultSeries series;
  series.suite = "s";
  series.benchmark = "b";
  series.metric = "m";
  series.unit = "ratio";
  series.direction = Direction::kHigherIsBetter;
  series.values = {0.1,
                   1e-300,
                   std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::max(),
                   -std::numeric_limits<double>::max(),
                   123456789012345678.0,
                   1.0 / 3.0};
  run.results.push_back(series);
  const RunUpload decoded = MustDecode(EncodeRunUpload(run));
  EXPECT_EQ(decoded, run) << EncodeRunUpload(run);
}

// ---- bad input -------------------------------------------------------------------------------

struct BadCase {
  std::string name;
  std::string body;
  std::string field;
  std::string message_part;
  DecodeLimits limits = {};
};

// The minimal fixture with one change.
std::string With(const std::function<void(json&)>& change) {
  json body = Minimal();
  change(body);
  return body.dump();
}

std::vector<BadCase> BadCases() {
  DecodeLimits two;
  two.max_results = 2;
  two.max_values = 2;
  two.max_string = 40;  // a sha's length
  const std::string long_string(41, 'x');
  const std::string ok_head =
      R"({"id":"0d5a3f8e-3c55-4d7e-bb0c-6f5c2a1e9b77","project":"p","commit":{"sha":")" +
      std::string(40, 'a') + R"("},"testbed":{"name":"t"},"results":[)";
  auto series = [](const std::string& values) {
    return R"({"suite":"s","benchmark":"b","metric":"m","unit":"ns","direction":"lower","values":)" +
           values + "}";
  };
  return {
      // Malformed JSON, with the place of the fault.
      {"empty body", "", "", "malformed JSON at line 1, column 1"},
      {"truncated", "{\n  \"id\": ", "", "malformed JSON at line 2, column 9"},
      {"trailing garbage", "{} x", "", "malformed JSON at line 1, column 4"},
      {"trailing comma", R"({"id": 1,})", "", "malformed JSON"},
      {"single quotes", "{'id': 1}", "", "malformed JSON at line 1, column 2"},
      {"bare NaN", ok_head + series("[1, NaN]") + "]}", "", "NaN and Infinity are not JSON"},
      {"bare Infinity", ok_head + series("[Infinity]") + "]}", "", "NaN and Infinity"},
      {"bare -Infinity", ok_head + series("[-Infinity]") + "]}", "", "NaN and Infinity"},
      {"number overflow", ok_head + series("[1e999]") + "]}", "", "out of the range of a double"},
      {"invalid UTF-8",
       R"({"project": "ok", "commit": {"subject": "caf)" + std::string("\xE9") + R"("}})", "",
       "invalid UTF-8"},
      {"invalid UTF-8 position", "{\n \"a\": \"\xFF\"}", "",
       "malformed JSON at line 2, column 8: invalid UTF-8"},
      {"overlong UTF-8", R"({"project": ")" + std::string("\xC0\xAF") + R"("})", "",
       "invalid UTF-8"},
      {"lone surrogate escape", R"({"project": "\ud800"})", "", "malformed JSON"},
      {"NUL escape", With([](json& j) { j["commit"]["subject"] = std::string("a\0b", 3); }),
       "commit.subject", "NUL character"},
      {"duplicate key", R"({"id": "a", "id": "b"})", "id", "duplicate key"},
      {"duplicate nested key", R"({"commit": {"sha": "a", "sha": "b"}})", "commit.sha",
       "duplicate key"},
      // The body itself.
      {"body is an array", "[]", "", "must be a JSON object, got an array"},
      {"body is a number", "42", "", "got a number"},
      {"body is null", "null", "", "got null"},
      // Unknown keys.
      {"unknown top-level key", With([](json& j) { j["reslts"] = json::array(); }), "reslts",
       "unknown field \"reslts\""},
      {"unknown commit key", With([](json& j) { j["commit"]["shaa"] = "x"; }), "commit.shaa",
       "unknown field"},
      {"unknown testbed key", With([](json& j) { j["testbed"]["gpu"] = "x"; }), "testbed.gpu",
       "unknown field"},
      {"unknown series key", With([](json& j) { j["results"][0]["dirction"] = "lower"; }),
       "results[0].dirction", "unknown field"},
      // Missing required fields.
      {"missing id", With([](json& j) { j.erase("id"); }), "id", "missing required field"},
      {"missing project", With([](json& j) { j.erase("project"); }), "project", "missing"},
      {"missing commit", With([](json& j) { j.erase("commit"); }), "commit", "missing"},
      {"missing commit.sha", With([](json& j) { j["commit"].erase("sha"); }), "commit.sha",
       "missing"},
      {"missing testbed", With([](json& j) { j.erase("testbed"); }), "testbed", "missing"},
      {"missing testbed.name", With([](json& j) { j["testbed"].erase("name"); }), "testbed.name",
       "missing"},
      {"missing results", With([](json& j) { j.erase("results"); }), "results", "missing"},
      {"null results", With([](json& j) { j["results"] = nullptr; }), "results", "missing"},
      {"missing suite", With([](json& j) { j["results"][0].erase("suite"); }), "results[0].suite",
       "missing"},
      {"missing benchmark", With([](json& j) { j["results"][0].erase("benchmark"); }),
       "results[0].benchmark", "missing"},
      {"missing metric", With([](json& j) { j["results"][0].erase("metric"); }),
       "results[0].metric", "missing"},
      {"missing direction", With([](json& j) { j["results"][0].erase("direction"); }),
       "results[0].direction", "missing"},
      {"missing values", With([](json& j) { j["results"][0].erase("values"); }),
       "results[0].values", "missing"},
      {"empty suite", With([](json& j) { j["results"][0]["suite"] = ""; }), "results[0].suite",
       "must not be empty"},
      // Wrong types.
      {"id is a number", With([](json& j) { j["id"] = 7; }), "id",
       "expected a string, got a number"},
      {"project is an array", With([](json& j) { j["project"] = {"a"}; }), "project",
       "got an array"},
      {"commit is a string", With([](json& j) { j["commit"] = "abc"; }), "commit",
       "expected an object, got a string"},
      {"parents is a string", With([](json& j) { j["commit"]["parents"] = "abc"; }),
       "commit.parents", "expected an array"},
      {"parent is a number", With([](json& j) { j["commit"]["parents"] = {1}; }),
       "commit.parents[0]", "expected a string"},
      {"subject is a boolean", With([](json& j) { j["commit"]["subject"] = true; }),
       "commit.subject", "got a boolean"},
      {"ancestry is an object", With([](json& j) { j["ancestry"] = json::object(); }), "ancestry",
       "expected an array"},
      {"fingerprint is an array", With([](json& j) { j["testbed"]["fingerprint"] = {1}; }),
       "testbed.fingerprint", "expected an object"},
      {"ci is a string", With([](json& j) { j["ci"] = "github"; }), "ci", "expected an object"},
      {"pr is a string", With([](json& j) {
         j["ci"] = {{"pr", "123"}};
       }),
       "ci.pr", "expected an integer"},
      {"pr is fractional", With([](json& j) {
         j["ci"] = {{"pr", 1.5}};
       }),
       "ci.pr", "expected an integer"},
      {"pr is zero", With([](json& j) {
         j["ci"] = {{"pr", 0}};
       }),
       "ci.pr", "positive"},
      {"pr is negative", With([](json& j) {
         j["ci"] = {{"pr", -5}};
       }),
       "ci.pr", "positive"},
      {"pr beyond int64", With([](json& j) {
         j["ci"] = {{"pr", 9223372036854775808ULL}};
       }),
       "ci.pr", "positive"},
      {"results is an object", With([](json& j) { j["results"] = json::object(); }), "results",
       "expected an array"},
      {"series is a string", With([](json& j) { j["results"][0] = "x"; }), "results[0]",
       "expected an object"},
      {"values is a number", With([](json& j) { j["results"][0]["values"] = 1; }),
       "results[0].values", "expected an array"},
      {"value is a string", With([](json& j) {
         j["results"][0]["values"] = {1, "2"};
       }),
       "results[0].values[1]", "expected a number, got a string"},
      {"value is a boolean", With([](json& j) { j["results"][0]["values"] = {true}; }),
       "results[0].values[0]", "got a boolean"},
      {"value is null", With([](json& j) {
         j["results"][0]["values"] = {1, 2, nullptr};
       }),
       "results[0].values[2]", "got null"},
      // Identifiers.
      {"id not a UUID", With([](json& j) { j["id"] = "not-a-uuid"; }), "id", "canonical UUID"},
      {"id in braces", With([](json& j) { j["id"] = "{0d5a3f8e-3c55-4d7e-bb0c-6f5c2a1e9b77}"; }),
       "id", "canonical UUID"},
      {"id without dashes", With([](json& j) { j["id"] = "0d5a3f8e3c554d7ebb0c6f5c2a1e9b77"; }),
       "id", "canonical UUID"},
      {"id with a non-hex digit",
       With([](json& j) { j["id"] = "0d5a3f8e-3c55-4d7e-bb0c-6f5c2a1e9b7g"; }), "id", "UUID"},
      {"sha too short", With([](json& j) { j["commit"]["sha"] = std::string(39, 'a'); }),
       "commit.sha", "40 hex digits"},
      {"sha not hex", With([](json& j) { j["commit"]["sha"] = std::string(39, 'a') + "g"; }),
       "commit.sha", "40 hex digits"},
      {"bad parent", With([](json& j) {
         j["commit"]["parents"] = {std::string(40, 'a'), "HEAD~1"};
       }),
       "commit.parents[1]", "40 hex"},
      {"bad merge_base", With([](json& j) { j["merge_base"] = "main"; }), "merge_base", "40 hex"},
      {"bad ancestry", With([](json& j) { j["ancestry"] = {"x"}; }), "ancestry[0]", "40 hex"},
      // Names.
      {"project with a space", With([](json& j) { j["project"] = "my proj"; }), "project",
       "[A-Za-z0-9._/-]"},
      {"project empty", With([](json& j) { j["project"] = ""; }), "project", "must not be empty"},
      {"project with a slash", With([](json& j) { j["project"] = "a/b"; }), "project",
       "must not contain '/'"},
      {"project too long", With([](json& j) { j["project"] = std::string(201, 'p'); }), "project",
       "1..200 characters"},
      {"project SQL", With([](json& j) { j["project"] = "p'; DROP TABLE projects;--"; }), "project",
       "[A-Za-z0-9._/-]"},
      {"branch with a semicolon", With([](json& j) { j["branch"] = "a;b"; }), "branch",
       "[A-Za-z0-9._/-]"},
      {"branch empty", With([](json& j) { j["branch"] = ""; }), "branch", "1..200"},
      {"target_branch non-ASCII", With([](json& j) { j["target_branch"] = "mäin"; }),
       "target_branch", "[A-Za-z0-9._/-]"},
      {"testbed name with a space", With([](json& j) { j["testbed"]["name"] = "gpu box"; }),
       "testbed.name", "[A-Za-z0-9._/-]"},
      // Timestamps.
      {"time with a space", With([](json& j) { j["started_at"] = "2024-03-01 12:00:00Z"; }),
       "started_at", "RFC 3339"},
      {"time without zone", With([](json& j) { j["started_at"] = "2024-03-01T12:00:00"; }),
       "started_at", "RFC 3339"},
      {"time lower-case z", With([](json& j) { j["started_at"] = "2024-03-01T12:00:00z"; }),
       "started_at", "RFC 3339"},
      {"time offset without colon",
       With([](json& j) { j["finished_at"] = "2024-03-01T12:00:00+0100"; }), "finished_at",
       "RFC 3339"},
      {"time empty fraction", With([](json& j) { j["started_at"] = "2024-03-01T12:00:00.Z"; }),
       "started_at", "RFC 3339"},
      {"time February 30", With([](json& j) { j["started_at"] = "2024-02-30T12:00:00Z"; }),
       "started_at", "RFC 3339"},
      {"time 29 February of a common year",
       With([](json& j) { j["started_at"] = "2023-02-29T12:00:00Z"; }), "started_at", "RFC 3339"},
      {"time hour 24", With([](json& j) { j["started_at"] = "2024-03-01T24:00:00Z"; }),
       "started_at", "RFC 3339"},
      {"time date only", With([](json& j) { j["started_at"] = "2024-03-01"; }), "started_at",
       "RFC 3339"},
      {"time unix seconds", With([](json& j) { j["started_at"] = 1709294400; }), "started_at",
       "expected a string"},
      {"commit time", With([](json& j) { j["commit"]["time"] = "yesterday"; }), "commit.time",
       "RFC 3339"},
      {"finished before started", With([](json& j) {
         j["started_at"] = "2024-03-01T12:00:00Z";
         j["finished_at"] = "2024-03-01T12:30:00+01:00";
       }),
       "finished_at", "before started_at"},
      {"finished before started by a fraction", With([](json& j) {
         j["started_at"] = "2024-03-01T12:00:00.5Z";
         j["finished_at"] = "2024-03-01T12:00:00.25Z";
       }),
       "finished_at", "before started_at"},
      // Series.
      {"direction unknown", With([](json& j) { j["results"][0]["direction"] = "up"; }),
       "results[0].direction", "unknown direction \"up\""},
      {"direction long form",
       With([](json& j) { j["results"][0]["direction"] = "lower_is_better"; }),
       "results[0].direction", "expected lower or higher"},
      {"direction upper case", With([](json& j) { j["results"][0]["direction"] = "LOWER"; }),
       "results[0].direction", "unknown direction"},
      {"empty values", With([](json& j) { j["results"][0]["values"] = json::array(); }),
       "results[0].values", "at least one value"},
      {"empty results", With([](json& j) { j["results"] = json::array(); }), "results",
       "at least one series"},
      {"negative ns", ok_head + series("[1, -0.5]") + "]}", "results[0].values[1]",
       "negative time (unit ns)"},
      {"negative us", With([](json& j) {
         j["results"][0]["unit"] = "us";
         j["results"][0]["values"] = {-1};
       }),
       "results[0].values[0]", "negative time"},
      {"negative ms", With([](json& j) {
         j["results"][0]["unit"] = "ms";
         j["results"][0]["values"] = {2, 3, -1e-9};
       }),
       "results[0].values[2]", "negative time"},
      {"negative s", With([](json& j) {
         j["results"][0]["unit"] = "s";
         j["results"][0]["values"] = {-7};
       }),
       "results[0].values[0]", "negative time (unit s)"},
      {"duplicate series", With([](json& j) {
         j["results"].push_back({{"suite", "other"},
                                 {"benchmark", "b"},
                                 {"metric", "m"},
                                 {"direction", "lower"},
                                 {"values", {1}}});
         j["results"].push_back(j["results"][0]);
         j["results"][2]["values"] = {2.0};
       }),
       "results[2]", "duplicate series (suite, benchmark, metric): same as results[0]"},
      // Limits.
      {"too many results", With([](json& j) {
         for (const char* m : {"m1", "m2"}) {
           j["results"].push_back({{"suite", "s"},
                                   {"benchmark", "b"},
                                   {"metric", m},
                                   {"direction", "lower"},
                                   {"values", {1}}});
         }
       }),
       "results", "more than 2 series", two},
      {"too many values", With([](json& j) {
         j["results"][0]["values"] = {1, 2, 3};
       }),
       "results[0].values", "more than 2 values", two},
      {"too many parents", With([](json& j) {
         j["commit"]["parents"] = {std::string(40, 'a'), std::string(40, 'b'),
                                   std::string(40, 'c')};
       }),
       "commit.parents", "more than 2 entries", two},
      {"string too long", With([&](json& j) { j["commit"]["subject"] = long_string; }),
       "commit.subject", "string longer than 40 bytes", two},
      {"string too long in an array", With([&](json& j) {
         j["testbed"]["fingerprint"] = {{"gpu", {"ok", long_string}}};
       }),
       "testbed.fingerprint.gpu[1]", "string longer than 40 bytes", two},
      {"key too long", With([&](json& j) {
         j["ci"] = {{long_string, 1}};
       }),
       "ci", "key longer than 40 bytes", two},
  };
}

TEST(WireDecode, BadInputMatrix) {
  const std::vector<BadCase> cases = BadCases();
  for (const BadCase& one : cases) {
    SCOPED_TRACE(one.name + ": " + one.body.substr(0, 300));
    Result<RunUpload> run = DecodeRunUpload(one.body, one.limits);
    if (run.has_value()) {
      ADD_FAILURE() << "accepted";
      continue;
    }
    EXPECT_EQ(run.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(run.error().field, one.field) << run.error().message;
    // The error travels back as JSON: it must be valid UTF-8 whatever the body held.
    EXPECT_NO_THROW(json({run.error().message, run.error().field}).dump());
    EXPECT_NE(run.error().message.find(one.message_part), std::string::npos)
        << "message: " << run.error().message << "\nexpected part: " << one.message_part;
  }
}

// ---- nesting depth ---------------------------------------------------------------------------

std::string Nested(size_t depth, const std::string& open, const std::string& close) {
  std::string text;
  text.reserve(depth * (open.size() + close.size()));
  for (size_t i = 0; i < depth; ++i) text += open;
  for (size_t i = 0; i < depth; ++i) text += close;
  return text;
}

TEST(WireDecode, HundredThousandBracketsAreRefusedWithoutRecursion) {
  for (const std::string& body :
       {std::string(100000, '['), Nested(100000, "[", "]"), Nested(100000, "{\"a\":", "}")}) {
    Result<RunUpload> run = DecodeRunUpload(body);
    ASSERT_FALSE(run.has_value());
    EXPECT_NE(run.error().message.find("nesting deeper than 32 levels"), std::string::npos)
        << run.error().message;
  }
  Result<RunUpload> run = DecodeRunUpload(Nested(100000, "[", "]"));
  ASSERT_FALSE(run.has_value());
  std::string field;
  for (int i = 0; i < 32; ++i) field += "[0]";
  EXPECT_EQ(run.error().field, field);
}

TEST(WireDecode, DepthLimitIsExact) {
  // The body is level 1, testbed 2, fingerprint 3: 29 more levels reach the limit of 32.
  auto with_depth = [](size_t extra) {
    json body = Minimal();
    body["testbed"]["fingerprint"] = json::parse("{\"x\":" + Nested(extra, "[", "]") + "}");
    return body.dump();
  };
  MustDecode(with_depth(29));
  Result<RunUpload> run = DecodeRunUpload(with_depth(30));
  ASSERT_FALSE(run.has_value());
  std::string field = "testbed.fingerprint.x";
  for (int i = 0; i < 29; ++i) field += "[0]";  // the 30th array is element 0 of the 29th
  EXPECT_EQ(run.error().field, field);
  EXPECT_NE(run.error().message.find("nesting deeper than 32"), std::string::npos);
}

TEST(WireDecode, BracketsInsideStringsDoNotCount) {
  json body = Minimal();
  body["commit"]["subject"] = std::string(1000, '[') + std::string(1000, '{');
  EXPECT_EQ(MustDecode(body.dump()).commit.subject.size(), 2000u);
}

}  // namespace
}  // namespace perfgate::wire
