// SPDX-License-Identifier: Apache-2.0
// Tests of the wire format v1 decoder: the fixtures in tests/fixtures/wire decode to the values
// they spell and survive Decode(Encode(x)) == x; hostile nesting depth. The table of bad inputs is
// wire_bad_input_test.cc.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/oracle_csv.h"
#include "wire/run_upload.h"
#include "wire/validate.h"

namespace perfwarden::wire {
namespace {

using ::nlohmann::json;
using ::perfwarden::testing::FixturePath;
using ::perfwarden::testing::ReadFile;

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
  EXPECT_EQ(run.results[0].key.suite, "gbench_sample");
  EXPECT_EQ(run.results[0].key.benchmark, "BM_Sort/1024");
  EXPECT_EQ(run.results[0].key.metric, "real_time");
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
  EXPECT_EQ(run.results[0].key.suite, suite);
  EXPECT_EQ(run.results[0].key.benchmark, benchmark);
  EXPECT_EQ(run.results[0].key.metric, "$1 \\x00 %s");
  EXPECT_EQ(run.commit.subject, subject);
  EXPECT_EQ(run.ci.job_url, "';--");
  EXPECT_EQ(json::parse(run.ci.extra_json)["note"], "DELETE FROM tokens");
}

TEST(WireDecode, TimestampsAcceptRfc3339WithinWhatPostgresqlStores) {
  for (const char* time :
       {"2024-02-29T23:59:60Z", "2000-02-29T00:00:00.123456789-00:30", "1999-12-31T23:59:59+15:59",
        "2024-01-01T00:00:00.5+00:00", "0001-01-01T00:00:00-15:59", "9999-12-31T23:59:59+15:59"}) {
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

// Each of these is RFC 3339 yet refused by PostgreSQL's timestamptz; the decoder refuses them
// first, naming the field, instead of the store failing without one.
TEST(WireDecode, TimestampsPostgresqlCannotStoreAreRefusedNamingTheField) {
  for (const char* time : {"0000-01-01T00:00:00Z", "0001-01-01T00:00:00+00:01",
                           "9999-12-31T23:59:59-00:01", "1999-12-31T23:59:59+16:00",
                           "1999-12-31T23:59:59-23:59", "2000-02-29T00:00:00.1234567891Z"}) {
    for (const char* field : {"started_at", "finished_at"}) {
      json body = Minimal();
      body[field] = time;
      auto run = DecodeRunUpload(body.dump());
      ASSERT_FALSE(run.has_value()) << field << " " << time;
      EXPECT_EQ(run.error().field, field) << time;
    }
    json body = Minimal();
    body["commit"]["time"] = time;
    auto run = DecodeRunUpload(body.dump());
    ASSERT_FALSE(run.has_value()) << time;
    EXPECT_EQ(run.error().field, "commit.time") << time;
  }
}

TEST(WireDecode, SeriesTextsLongerThanTheIndexesTakeAreRefusedNamingTheField) {
  for (const char* key : {"suite", "benchmark", "metric", "unit"}) {
    json body = Minimal();
    body["results"][0][key] = std::string(kMaxSeriesTextBytes, 'x');
    MustDecode(body.dump());
    body["results"][0][key] = std::string(kMaxSeriesTextBytes + 1, 'x');
    auto run = DecodeRunUpload(body.dump());
    ASSERT_FALSE(run.has_value()) << key;
    EXPECT_EQ(run.error().field, std::string("results[0].") + key);
  }
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

// ---- bounded memory: the series are decoded as the body is read --------------------------------

// Each series is decoded as soon as it is read: a bad first series is the answer even when the
// rest of the body is not JSON at all (the DOM of the whole body is never built).
TEST(WireDecode, ABadSeriesIsRefusedBeforeTheRestOfTheBodyIsRead) {
  std::string text = Minimal().dump();
  text = text.substr(0, text.find("\"results\"")) + R"("results": [{}, {}, {} and no more JSON)";
  Result<RunUpload> run = DecodeRunUpload(text);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().field, "results[0].suite");
  EXPECT_EQ(run.error().message, "missing required field");
  Result<RunUpload> array = DecodeRunUpload("[{}, {}, {} and no more JSON");
  ASSERT_FALSE(array.has_value());
  EXPECT_EQ(array.error().message, "the body must be a JSON object, got an array");
}

// A series' DOM holds at most max_values values and a few keys; the rest of the body
// max_other_values besides commit.parents and ancestry. Each bound names where it was passed.
TEST(WireDecode, EverySeriesAndTheRestOfTheBodyAreBounded) {
  DecodeLimits limits;
  limits.max_values = 10;
  limits.max_other_values = 50;
  json body = Minimal();
  body["results"][0]["values"] = std::vector<int>(500, 1);
  Result<RunUpload> values = DecodeRunUpload(body.dump(), limits);
  ASSERT_FALSE(values.has_value());
  EXPECT_EQ(values.error().field, "results[0].values[68]");  // 6 values before the array's
  EXPECT_EQ(values.error().message, "an element of results holds more than 74 JSON values");
  body = Minimal();
  body["testbed"]["fingerprint"] = {{"gpu", std::vector<json>(500, json::object())}};
  Result<RunUpload> free_form = DecodeRunUpload(body.dump(), limits);
  ASSERT_FALSE(free_form.has_value());
  EXPECT_EQ(free_form.error().message, "JSON body has more than 70 elements (values)");
  EXPECT_EQ(free_form.error().field.rfind("testbed.fingerprint.gpu[", 0), 0u)
      << free_form.error().field;
  // Within the bounds the same upload decodes, and the series are kept in order.
  body["testbed"]["fingerprint"] = {{"gpu", std::vector<json>(10, json::object())}};
  body["results"][0]["values"] = std::vector<int>(10, 1);
  json second = body["results"][0];
  second["benchmark"] = "BM_Second";
  body["results"].push_back(second);
  const RunUpload run = MustDecode(body.dump(), limits);
  ASSERT_EQ(run.results.size(), 2u);
  EXPECT_EQ(run.results[1].key.benchmark, "BM_Second");
  EXPECT_EQ(run.results[0].values, std::vector<double>(10, 1.0));
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
  series.key = {"s", "b", "m"};
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

// The perfwarden build that measured the run: optional, kept verbatim, 1..128 printable ASCII.
TEST(WireDecode, RunnerVersionIsOptionalRoundTripsAndIsValidated) {
  EXPECT_EQ(MustDecode(Minimal().dump()).runner_version, "");
  EXPECT_EQ(EncodeRunUpload(MustDecode(Minimal().dump())).find("runner_version"),
            std::string::npos);  // absent stays absent
  for (const std::string& version : std::vector<std::string>{
           "v1.2.0-3-g1a2b3c4-dirty", "0a1f124", "0.1.0", std::string(kMaxVersionLength, 'v')}) {
    json body = Minimal();
    body["runner_version"] = version;
    const RunUpload run = MustDecode(body.dump());
    EXPECT_EQ(run.runner_version, version);
    EXPECT_EQ(MustDecode(EncodeRunUpload(run)), run);
  }
  for (const json& bad : {json(""), json("v1 2"), json(std::string(kMaxVersionLength + 1, 'v')),
                          json("caf\xc3\xa9"), json(12), json::array()}) {
    json body = Minimal();
    body["runner_version"] = bad;
    Result<RunUpload> refused = DecodeRunUpload(body.dump());
    ASSERT_FALSE(refused.has_value()) << bad.dump();
    EXPECT_EQ(refused.error().field, "runner_version") << bad.dump();
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
       {"{\"a\":" + std::string(100000, '['), "{\"a\":" + Nested(100000, "[", "]") + "}",
        Nested(100000, "{\"a\":", "}")}) {
    Result<RunUpload> run = DecodeRunUpload(body);
    ASSERT_FALSE(run.has_value());
    EXPECT_NE(run.error().message.find("nesting deeper than 32 levels"), std::string::npos)
        << run.error().message;
  }
  Result<RunUpload> run = DecodeRunUpload("{\"a\":" + Nested(100000, "[", "]") + "}");
  ASSERT_FALSE(run.has_value());
  std::string field = "a";
  for (int i = 0; i < 31; ++i) field += "[0]";
  EXPECT_EQ(run.error().field, field);
  // A root that is not an object is refused at its first byte, before any depth.
  Result<RunUpload> array = DecodeRunUpload(std::string(100000, '['));
  ASSERT_FALSE(array.has_value());
  EXPECT_EQ(array.error().message, "the body must be a JSON object, got an array");
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
}  // namespace perfwarden::wire
