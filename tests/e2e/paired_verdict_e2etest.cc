// SPDX-License-Identifier: Apache-2.0
// Paired verdicts end to end: a real server and PostgreSQL, a pull request's run posted over
// HTTP, then POST .../verdict/paired with a planted measurement (tests/testing/planted_paired.h:
// a 10% head slowdown on one series, noise on others). Stored and read back as the run's
// verdict, a retried post answered from the store, bad bodies refused naming the field with
// nothing stored, an unknown run, amendments of an unpaired verdict (stale, merged, withdrawn),
// replay, and the baseline's values kept out of runs, series and history.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/planted_paired.h"
#include "tests/testing/test_server.h"
#include "wire/paired.h"

namespace perfwarden {
namespace {

using nlohmann::json;
using testing::HttpResponse;
using testing::PlantedMeasurement;
using testing::PlantedSeries;

std::string RunId(int n) { return testing::TestRunId(n); }
std::string Sha(int n) { return testing::TestSha(n, 0xfa1); }

constexpr int kMainRun = 1, kPullRequest = 10;

// 20 repetitions around `center`, about 0.5% spread.
std::vector<double> Values(double center, int salt) {
  std::vector<double> values;
  for (int i = 0; i < 20; ++i) {
    values.push_back(center * (1.0 + 0.001 * static_cast<double>((i * 7 + salt * 3) % 11 - 5)));
  }
  return values;
}

// A run of suite "planted" (the planted measurement's) with one series per (benchmark, center).
json Upload(int id, const std::string& branch, int commit,
            const std::vector<std::pair<std::string, double>>& centers) {
  json results = json::array();
  int salt = id;
  for (const auto& [benchmark, center] : centers) {
    results.push_back({{"suite", "planted"},
                       {"benchmark", benchmark},
                       {"metric", "real_time"},
                       {"unit", "ns"},
                       {"direction", "lower"},
                       {"values", Values(center, salt++)}});
  }
  json upload = {{"id", RunId(id)},
                 {"project", "proj"},
                 {"branch", branch},
                 {"commit", {{"sha", Sha(commit)}, {"subject", "c" + std::to_string(commit)}}},
                 {"testbed", {{"name", "bed"}, {"fingerprint", {{"cpu_model", "cpu-a"}}}}},
                 {"ci", {{"provider", "github"}, {"pr", 42}}},
                 {"results", results}};
  if (branch != "main") {
    upload["target_branch"] = "main";
    upload["merge_base"] = Sha(1);
  }
  return upload;
}

class PairedVerdictE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
    if (HasFatalFailure()) return;
    ci_ = Token({"ingest", "read"});
    reader_ = Token({"read"});
    // main at the merge-base; the pull request: BM_Slow 10% slower, BM_Same 8% slower (the
    // machine drifted between the runs), BM_Other unchanged.
    PostRun(
        Upload(kMainRun, "main", 1, {{"BM_Slow", 7000}, {"BM_Same", 8000}, {"BM_Other", 9000}}));
    PostRun(Upload(kPullRequest, "feature", 100,
                   {{"BM_Slow", 7700}, {"BM_Same", 8640}, {"BM_Other", 9000}}));
  }

  std::string Token(const std::vector<std::string>& scopes) {
    HttpResponse r = http_->Post("/api/v1/projects/proj/tokens",
                                 json{{"name", "t"}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json().value("token", "");
  }
  void PostRun(const json& upload) {
    HttpResponse r = http_->Post("/api/v1/projects/proj/runs", upload.dump(), ci_);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  std::string VerdictUrl(int run) {
    return "/api/v1/projects/proj/runs/" + RunId(run) + "/verdict";
  }
  HttpResponse PostPaired(const std::string& body, int run = kPullRequest) {
    return http_->Post(VerdictUrl(run) + "/paired", body, ci_);
  }
  HttpResponse PostPaired(const wire::PairedMeasurement& m, int run = kPullRequest) {
    return PostPaired(wire::EncodePairedMeasurement(m), run);
  }
  json Latest(int run = kPullRequest) {
    HttpResponse r = http_->Get(VerdictUrl(run), reader_);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json()["verdict"];
  }
  void ExpectReplayMatches() {
    HttpResponse replay = http_->Get(VerdictUrl(kPullRequest) + "?replay=1", reader_);
    ASSERT_EQ(replay.status, 200) << replay.body;
    EXPECT_TRUE(replay.Json()["replay"]["matches"].get<bool>()) << replay.body;
    EXPECT_EQ(replay.Json()["replay"]["algorithm_version"], "perfwarden-paired/3");
  }
  static json Row(const json& verdict, const std::string& benchmark) {
    for (const json& r : verdict["results"]) {
      if (r["benchmark"] == benchmark) return r;
    }
    ADD_FAILURE() << "no result for " << benchmark;
    return json();
  }
  int64_t Count(const std::string& sql) {
    pqxx::connection conn(dsn_);
    pqxx::nontransaction tx(conn);
    return tx.exec1(sql)[0].as<int64_t>();
  }
  // Waits until the history worker has taken every stored run.
  void WaitForHistory() {
    for (int i = 0; i < 1200; ++i) {
      if (Count("SELECT count(*) FROM runs WHERE history_analysed_at IS NULL") == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "history analysis did not finish within 60 s";
  }

  std::string ci_, reader_;
};

TEST_F(PairedVerdictE2eTest, APlantedMeasurementIsStoredAsTheRunsVerdict) {
  HttpResponse posted = PostPaired(PlantedMeasurement(Sha(1)));
  ASSERT_EQ(posted.status, 201) << posted.body;
  const json v = posted.Json()["verdict"];
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(v["algorithm_version"], "perfwarden-paired/3");
  EXPECT_EQ(v["baseline"], (json{{"commit", Sha(1)},
                                 {"branch", "main"},
                                 {"testbed", "paired-bed"},
                                 {"run_ids", json::array()},
                                 {"selection", "paired"},
                                 {"distance", 0}}));
  EXPECT_EQ(v["contender_run_ids"], json{RunId(kPullRequest)});
  EXPECT_EQ(v["commit"], Sha(100));
  EXPECT_EQ(v["branch"], "feature");
  EXPECT_EQ(v["testbed"], "paired-bed");
  EXPECT_EQ(v["pr"], 42);
  EXPECT_EQ(v["parameters"]["threshold"], 0.05);
  EXPECT_EQ(v["parameters"]["rules"][0]["benchmark"], "BM_Skip");
  EXPECT_EQ(v["counts"], (json{{"regression", 1},
                               {"improvement", 0},
                               {"equivalent", 1},
                               {"inconclusive", 0},
                               {"ignored", 1},
                               {"new", 1},
                               {"unstable", 1},
                               {"pass", 0},
                               {"reported", 0}}));
  EXPECT_EQ(Row(v, "BM_Slow")["verdict"], "REGRESSION");
  EXPECT_NEAR(Row(v, "BM_Slow")["change"].get<double>(), 0.10, 0.01);
  EXPECT_EQ(Row(v, "BM_Noisy")["verdict"], "UNSTABLE");
  EXPECT_GT(Row(v, "BM_Noisy")["repetitions_needed"].get<int64_t>(), 0);
  EXPECT_EQ(v["paired"]["baseline_commit"], Sha(1));
  EXPECT_TRUE(v["paired"]["amends"].is_null());
  EXPECT_EQ(v["paired"]["measured"], 3);
  EXPECT_EQ(v["paired"]["blocks"], 6);
  EXPECT_EQ(v["paired"]["design"]["stopped"], "max_blocks");

  // GET answers the same verdict; the run names it; the same body again is the stored one.
  EXPECT_EQ(Latest(), v);
  HttpResponse run = http_->Get("/api/v1/projects/proj/runs/" + RunId(kPullRequest), reader_);
  EXPECT_EQ(run.Json()["verdict"]["id"], v["id"]);
  HttpResponse again = PostPaired(PlantedMeasurement(Sha(1)));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json()["verdict"]["id"], v["id"]);
  EXPECT_EQ(Count("SELECT count(*) FROM verdicts"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM verdicts WHERE measurement IS NOT NULL"), 1);
  ExpectReplayMatches();

  // Another measurement is another verdict, the newest.
  HttpResponse other = PostPaired(PlantedMeasurement(Sha(1), {{"BM_Same", 2000, 1.0, 0, -1}}));
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(other.Json()["verdict"]["outcome"], "pass");
  EXPECT_EQ(Latest()["id"], other.Json()["verdict"]["id"]);
}

TEST_F(PairedVerdictE2eTest, TheBaselineValuesNeverBecomeRunsSeriesOrHistory) {
  WaitForHistory();
  if (HasFatalFailure()) return;
  auto snapshot = [&] {
    json out;
    out["runs"] = http_->Get("/api/v1/projects/proj/runs?limit=1000", reader_).Json()["runs"];
    for (const std::string branch : {"main", "feature"}) {
      out[branch] = http_
                        ->Get(
                            "/api/v1/projects/proj/series?benchmark=BM_Slow&metric=real_time"
                            "&branch=" +
                                branch,
                            reader_)
                        .Json();
    }
    out["change_points"] =
        http_
            ->Get("/api/v1/projects/proj/change-points?benchmark=BM_Slow&metric=real_time", reader_)
            .Json();
    out["benchmarks"] = http_->Get("/api/v1/projects/proj/benchmarks", reader_).Json();
    for (const char* table : {"runs", "commits", "sample_sets", "history_points", "testbeds"}) {
      out["rows"][table] = Count(std::string("SELECT count(*) FROM ") + table);
    }
    out["values"] = Count("SELECT coalesce(sum(cardinality(vals)), 0) FROM sample_sets");
    return out;
  };
  const json before = snapshot();
  ASSERT_EQ(before["runs"].size(), 2u) << before.dump();
  ASSERT_EQ(before["main"]["points"].size(), 1u) << before.dump();
  ASSERT_EQ(PostPaired(PlantedMeasurement(Sha(1))).status, 201);
  WaitForHistory();
  EXPECT_EQ(snapshot(), before);
  // The measurement's baseline (BM_Slow around 1000 ns) is nowhere in the stored series.
  for (const json& point : before["main"]["points"]) {
    EXPECT_GT(point["min"].get<double>(), 6000) << point.dump();
  }
}

TEST_F(PairedVerdictE2eTest, ABadBodyIsRefusedNamingTheFieldAndNothingIsStored) {
  json m = json::parse(wire::EncodePairedMeasurement(PlantedMeasurement(Sha(1))));
  struct Case {
    std::string body;
    std::string field;
  };
  std::string not_finite = m.dump();
  const std::string first_head = "\"head\":[";
  not_finite.insert(not_finite.find(first_head) + first_head.size(), "1e999,");
  json unknown = m;
  unknown["series"][1]["blockz"] = json::array();
  json bad_sha = m;
  bad_sha["baseline_commit"] = "not-a-sha";
  json bad_test = m;
  bad_test["design"]["test"] = "z";
  json negative = m;
  negative["series"][0]["blocks"][2]["base"][0] = -1.0;
  const std::vector<Case> cases = {
      {unknown.dump(), "series[1].blockz"},
      {bad_sha.dump(), "baseline_commit"},
      {bad_test.dump(), "design.test"},
      {"{}", "baseline_commit"},
      // Not positive: finite JSON, but paired judging takes logarithms.
      {negative.dump(), "series[0].blocks[2].base[0]"},
  };
  for (const Case& c : cases) {
    HttpResponse r = PostPaired(c.body);
    EXPECT_EQ(r.status, 400) << c.field << ": " << r.body;
    EXPECT_EQ(r.Json()["error"]["field"], c.field) << r.body;
  }
  // NaN and a number beyond a double are not JSON numbers: the parser refuses them at their
  // line and column (there is no field to name yet).
  std::string nan = m.dump();
  nan.insert(nan.find(first_head) + first_head.size(), "NaN,");
  for (const std::string& body : {nan, not_finite}) {
    HttpResponse refused = PostPaired(body);
    EXPECT_EQ(refused.status, 400) << refused.body;
    const std::string message = refused.Json()["error"]["message"].get<std::string>();
    EXPECT_NE(message.find("line 1, column"), std::string::npos) << message;
  }
  HttpResponse untyped =
      http_->Request("POST", VerdictUrl(kPullRequest) + "/paired", ci_, m.dump(), "text/plain");
  EXPECT_EQ(untyped.status, 415) << untyped.body;
  HttpResponse read_only = http_->Post(VerdictUrl(kPullRequest) + "/paired", m.dump(), reader_);
  EXPECT_EQ(read_only.status, 403) << read_only.body;
  EXPECT_EQ(http_->Get(VerdictUrl(kPullRequest), reader_).status, 404);
  EXPECT_EQ(Count("SELECT count(*) FROM verdicts"), 0);

  HttpResponse unknown_run = PostPaired(m.dump(), 99);
  EXPECT_EQ(unknown_run.status, 404) << unknown_run.body;
}

TEST_F(PairedVerdictE2eTest, AnAmendmentReplacesTheReMeasuredRowsOfTheNewestVerdict) {
  HttpResponse unpaired = http_->Post(VerdictUrl(kPullRequest), "{}", ci_);
  ASSERT_EQ(unpaired.status, 201) << unpaired.body;
  const json first = unpaired.Json()["verdict"];
  ASSERT_EQ(Row(first, "BM_Slow")["verdict"], "REGRESSION");
  ASSERT_EQ(Row(first, "BM_Same")["verdict"], "REGRESSION");
  ASSERT_EQ(first["counts"]["regression"], 2);
  const int64_t first_id = first["id"].get<int64_t>();

  // `perfwarden gate --confirm` re-measured the two regressions side by side: BM_Slow is 10%
  // slower, BM_Same unchanged (the machine drifted between the unpaired runs).
  wire::PairedMeasurement m =
      PlantedMeasurement(Sha(1), {{"BM_Slow", 7000, 1.10, 0, -1}, {"BM_Same", 8000, 1.0, 0, -1}});
  m.amends = first_id + 1000;
  HttpResponse stale = PostPaired(m);
  ASSERT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(stale.Json()["error"]["field"], "amends");
  EXPECT_NE(stale.Json()["error"]["message"].get<std::string>().find("verdict " +
                                                                     std::to_string(first_id)),
            std::string::npos)
      << stale.body;

  m.amends = first_id;
  HttpResponse amended = PostPaired(m);
  ASSERT_EQ(amended.status, 201) << amended.body;
  const json v = amended.Json()["verdict"];
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(v["algorithm_version"], "perfwarden-paired/3");
  EXPECT_EQ(Row(v, "BM_Slow")["verdict"], "REGRESSION");
  EXPECT_TRUE(Row(v, "BM_Slow").contains("paired"));
  EXPECT_EQ(Row(v, "BM_Same")["verdict"], "EQUIVALENT");
  EXPECT_EQ(Row(v, "BM_Other"), Row(first, "BM_Other"));
  EXPECT_EQ(v["counts"]["regression"], 1);
  EXPECT_EQ(v["counts"]["equivalent"], first["counts"]["equivalent"].get<int>() + 1);
  EXPECT_EQ(v["baseline"], first["baseline"]);
  EXPECT_EQ(v["parameters"], first["parameters"]);
  EXPECT_EQ(v["contender_run_ids"], first["contender_run_ids"]);
  EXPECT_EQ(v["paired"]["amends"], first_id);
  EXPECT_EQ(v["warnings"].back(), "2 regression(s) re-measured side by side against " +
                                      Sha(1).substr(0, 12) + ": 1 confirmed, 1 withdrawn");
  EXPECT_EQ(Latest(), v);
  ExpectReplayMatches();

  // The same amendment again is the stored verdict; amending the paired one is a conflict.
  HttpResponse retried = PostPaired(m);
  ASSERT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(retried.Json()["verdict"]["id"], v["id"]);
  m.amends = v["id"].get<int64_t>();
  HttpResponse paired_again = PostPaired(m);
  EXPECT_EQ(paired_again.status, 409) << paired_again.body;
  EXPECT_EQ(paired_again.Json()["error"]["field"], "amends");
}

TEST_F(PairedVerdictE2eTest, AnAmendmentThatWithdrawsEveryRegressionPasses) {
  HttpResponse unpaired = http_->Post(VerdictUrl(kPullRequest), "{}", ci_);
  ASSERT_EQ(unpaired.status, 201) << unpaired.body;
  wire::PairedMeasurement m =
      PlantedMeasurement(Sha(1), {{"BM_Slow", 7000, 1.0, 0, -1}, {"BM_Same", 8000, 1.0, 0, -1}});
  m.amends = unpaired.Json()["verdict"]["id"].get<int64_t>();
  HttpResponse amended = PostPaired(m);
  ASSERT_EQ(amended.status, 201) << amended.body;
  const json v = amended.Json()["verdict"];
  EXPECT_EQ(v["outcome"], "pass");
  EXPECT_EQ(v["counts"]["regression"], 0);
  EXPECT_EQ(v["warnings"].back(), "2 regression(s) re-measured side by side against " +
                                      Sha(1).substr(0, 12) + ": 0 confirmed, 2 withdrawn");
  ExpectReplayMatches();
}

}  // namespace
}  // namespace perfwarden
