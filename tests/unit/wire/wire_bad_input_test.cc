// SPDX-License-Identifier: Apache-2.0
// The wire format v1 decoder on bad input: a table of bad uploads, one per rule, each answered
// with kInvalidArgument naming the field and the problem (the valid uploads and the nesting depth
// are wire_test.cc).
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/oracle_csv.h"
#include "wire/run_upload.h"

namespace perfwarden::wire {
namespace {

using ::nlohmann::json;
using ::perfwarden::testing::FixturePath;
using ::perfwarden::testing::ReadFile;

json Minimal() { return json::parse(ReadFile(FixturePath("wire/minimal.json"))); }

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

}  // namespace
}  // namespace perfwarden::wire
