// SPDX-License-Identifier: Apache-2.0
// The API's validators against the database's constraints, end to end on a real PostgreSQL
// (issue 30, item 3a): every value at a limit the API accepts is stored, and every value past it
// is refused with a 400 naming its field, never left for PostgreSQL to refuse with "field": null.
// The pairs: project names (wire::kMaxNameLength against projects.name's CHECK), timestamps
// (wire::ParseRfc3339 against timestamptz: year, UTC offset, fraction), series texts
// (wire::kMaxSeriesTextBytes against the unique indexes' row size) and an upload's nesting depth
// (32, docs/wire-format.md, on a server whose limits.json_depth is its default 64), and a bisect
// answer's shas (lower case, as bisect_jobs' CHECKs take them).
#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/testing/ids.h"
#include "tests/testing/test_server.h"
#include "wire/validate.h"

namespace perfwarden::testing {
namespace {

using nlohmann::json;

// Text that PostgreSQL cannot compress (an index row holds it as written): random letters and
// digits from a fixed seed.
std::string Incompressible(std::size_t bytes, unsigned seed) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> pick(0, 35);
  std::string text(bytes, 'a');
  for (char& c : text) c = kAlphabet[pick(random)];
  return text;
}

class ApiContractsE2eTest : public ServerTest {
 protected:
  void Customize(config::ServerConfig& config) override {
    config.limits.json_depth = 64;  // the default, which other bodies may use
  }

  // A valid upload of one series to `project`.
  json Upload(const std::string& project, int n) {
    return {{"id", TestRunId(n)},
            {"project", project},
            {"branch", "main"},
            {"commit", {{"sha", TestSha(n, 0xc0)}}},
            {"testbed", {{"name", "bed"}}},
            {"results", json::array({{{"suite", "s"},
                                      {"benchmark", "BM_x"},
                                      {"metric", "real_time"},
                                      {"unit", "ns"},
                                      {"direction", "lower"},
                                      {"values", {1.0, 2.0}}}})}};
  }

  HttpResponse PostRun(const std::string& project, const json& body) {
    return http_->Post("/api/v1/projects/" + project + "/runs", body.dump(), admin_);
  }

  static std::string Describe(const HttpResponse& r) {
    return std::to_string(r.status) + " " + r.body.substr(0, 400);
  }
};

TEST_F(ApiContractsE2eTest, ProjectNamesUpToTheApiLimitAreStoredAndLongerOnesNameTheField) {
  const std::string longest(wire::kMaxNameLength, 'p');
  HttpResponse made = http_->Post("/api/v1/projects", json{{"name", longest}}.dump(), admin_);
  ASSERT_EQ(made.status, 201) << Describe(made);
  EXPECT_EQ(made.Json()["project"]["name"], longest);
  // Its runs too, with a branch and a testbed at the same limit.
  json run = Upload(longest, 1);
  run["branch"] = std::string(wire::kMaxNameLength, 'b');
  run["testbed"]["name"] = std::string(wire::kMaxNameLength, 't');
  HttpResponse stored = PostRun(longest, run);
  EXPECT_EQ(stored.status, 201) << Describe(stored);
  EXPECT_EQ(http_->Get("/api/v1/projects/" + longest + "/runs/" + TestRunId(1), admin_).status,
            200);

  const std::string too_long(wire::kMaxNameLength + 1, 'q');
  HttpResponse refused = http_->Post("/api/v1/projects", json{{"name", too_long}}.dump(), admin_);
  EXPECT_EQ(refused.status, 400) << Describe(refused);
  EXPECT_EQ(refused.ErrorField(), "name");
}

TEST_F(ApiContractsE2eTest, TimestampsPostgresqlCannotStoreAreRefusedNamingTheField) {
  CreateProject("p");
  int n = 10;
  for (const char* time : {"0000-01-01T00:00:00Z", "0001-01-01T00:00:00+00:01",
                           "9999-12-31T23:59:59-00:01", "2024-01-01T00:00:00+16:00",
                           "2024-01-01T00:00:00-23:59", "2024-01-01T00:00:00.1234567891Z"}) {
    for (const std::string field : {"started_at", "finished_at", "commit.time"}) {
      json run = Upload("p", ++n);
      if (field == "commit.time") {
        run["commit"]["time"] = time;
      } else {
        run[field] = time;
      }
      HttpResponse r = PostRun("p", run);
      EXPECT_EQ(r.status, 400) << field << " " << time << ": " << Describe(r);
      EXPECT_EQ(r.ErrorField(), field) << time << ": " << Describe(r);
    }
    // And as a query's bound.
    std::string encoded = time;
    if (auto plus = encoded.find('+'); plus != std::string::npos) encoded.replace(plus, 1, "%2B");
    HttpResponse listed = http_->Get("/api/v1/projects/p/runs?since=" + encoded, admin_);
    EXPECT_EQ(listed.status, 400) << time << ": " << Describe(listed);
    EXPECT_EQ(listed.ErrorField(), "since") << time;
  }
  EXPECT_EQ(http_->Get("/api/v1/projects/p/runs", admin_).Json()["runs"].size(), 0u);
}

TEST_F(ApiContractsE2eTest, TimestampsAtTheLimitsAreStored) {
  CreateProject("p");
  int n = 100;
  for (const char* time : {"0001-01-01T00:00:00-15:59", "9999-12-31T23:59:59+15:59",
                           "2024-01-01T00:00:00.123456789+15:59", "2016-12-31T23:59:60Z"}) {
    json run = Upload("p", ++n);
    run["commit"]["time"] = time;
    run["started_at"] = time;
    run["finished_at"] = time;
    HttpResponse r = PostRun("p", run);
    EXPECT_EQ(r.status, 201) << time << ": " << Describe(r);
  }
}

TEST_F(ApiContractsE2eTest, SeriesTextsUpToTheLimitAreStoredAndLongerOnesNameTheField) {
  CreateProject("p");
  json run = Upload("p", 1);
  run["results"][0]["suite"] = Incompressible(wire::kMaxSeriesTextBytes, 1);
  run["results"][0]["benchmark"] = Incompressible(wire::kMaxSeriesTextBytes, 2);
  run["results"][0]["metric"] = Incompressible(wire::kMaxSeriesTextBytes, 3);
  run["results"][0]["unit"] = Incompressible(wire::kMaxSeriesTextBytes, 4);
  HttpResponse stored = PostRun("p", run);
  EXPECT_EQ(stored.status, 201) << Describe(stored);

  // 4 KiB each is within the body's string limit (4096 bytes) but not the index's row.
  int n = 10;
  for (const std::string key : {"suite", "benchmark", "metric", "unit"}) {
    json bad = Upload("p", ++n);
    bad["results"][0][key] = Incompressible(4096, 5);
    HttpResponse r = PostRun("p", bad);
    EXPECT_EQ(r.status, 400) << key << ": " << Describe(r);
    EXPECT_EQ(r.ErrorField(), "results[0]." + key) << Describe(r);
  }
  EXPECT_EQ(http_->Get("/api/v1/projects/p/runs", admin_).Json()["runs"].size(), 1u);
}

// A bisect's answer (perfwarden bisect --format json) is stored with its shas in bisect_jobs, whose
// CHECKs take lower case only: an upper-case sha is refused naming it, a lower-case one stored.
TEST_F(ApiContractsE2eTest, BisectAnswersWithUpperCaseShasNameTheField) {
  CreateProject("p");
  auto upper = [](std::string sha) {
    for (char& c : sha) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return sha;
  };
  const std::string good = TestSha(1, 0xabc), bad = TestSha(2, 0xabc), culprit = TestSha(3, 0xabc);
  for (const std::string field : {"good", "bad", "culprits[0].sha"}) {
    json answer = {{"good", good}, {"bad", bad}, {"culprits", {{{"sha", culprit}}}}};
    if (field == "culprits[0].sha") {
      answer["culprits"][0]["sha"] = upper(culprit);
    } else {
      answer[field] = upper(answer[field].get<std::string>());
    }
    HttpResponse r = http_->Post("/api/v1/projects/p/bisects", answer.dump(), admin_);
    EXPECT_EQ(r.status, 400) << field << ": " << Describe(r);
    EXPECT_EQ(r.ErrorField(), field) << Describe(r);
  }
  json answer = {{"good", good}, {"bad", bad}, {"culprits", {{{"sha", culprit}}}}};
  HttpResponse stored = http_->Post("/api/v1/projects/p/bisects", answer.dump(), admin_);
  EXPECT_EQ(stored.status, 201) << Describe(stored);
}

TEST_F(ApiContractsE2eTest, UploadsNestDeeperThan32AreRefusedWhateverLimitsJsonDepthSays) {
  CreateProject("p");
  auto nested = [](int levels) {  // the body 1, "ci" 2, then arrays
    json value = 1;
    for (int i = 0; i < levels - 2; ++i) value = json::array({value});
    return value;
  };
  json run = Upload("p", 1);
  run["ci"] = {{"deep", nested(32)}};
  HttpResponse accepted = PostRun("p", run);
  EXPECT_EQ(accepted.status, 201) << Describe(accepted);
  json deeper = Upload("p", 2);
  deeper["ci"] = {{"deep", nested(33)}};
  HttpResponse refused = PostRun("p", deeper);
  EXPECT_EQ(refused.status, 400) << Describe(refused);
  EXPECT_NE(refused.body.find("deeper than 32"), std::string::npos) << refused.body;
  EXPECT_FALSE(refused.ErrorField().empty()) << refused.body;
}

}  // namespace
}  // namespace perfwarden::testing
