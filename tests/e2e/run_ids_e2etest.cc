// SPDX-License-Identifier: Apache-2.0
// Run ids are unique per project (issue 27): a project posting a run id another project already
// holds is answered as for a fresh id, and from then on the two runs, their samples, verdicts,
// series, comparisons and history stay apart. Re-posts within a project still answer 200 (the
// same body) or 409 (another body).
#include <gtest/gtest.h>

#include <pqxx/pqxx>
#include <string>
#include <tuple>
#include <vector>

#include "tests/testing/api_e2e_fixture.h"
#include "tests/testing/history_wait.h"

namespace perfwarden {
namespace {

using api_e2e::ApiE2eTest;
using api_e2e::Describe;
using api_e2e::RunId;
using api_e2e::Sha;
using api_e2e::Upload;
using nlohmann::json;
using testing::HttpResponse;

// 12 repetitions around `center`, 0.1% apart: tight enough for a clear verdict either way.
std::vector<double> Around(double center) {
  std::vector<double> values;
  for (int i = 0; i < 12; ++i) values.push_back(center * (1.0 + 0.001 * (i % 4 - 1.5)));
  return values;
}

class RunIdsE2eTest : public ApiE2eTest {
 protected:
  // Run 1 then run 2 of `project` on main, at `first_commit` and the next commit, the benchmark
  // at `before` then `after`.
  void PostPair(const std::string& project, const std::string& token, int first_commit,
                double before, double after, int expected_status) {
    EXPECT_EQ(PostRun(project, RunUpload(project, 1, first_commit, before), token).status,
              expected_status);
    EXPECT_EQ(PostRun(project, RunUpload(project, 2, first_commit + 1, after), token).status,
              expected_status);
  }
  static std::string RunUpload(const std::string& project, int run, int commit, double center) {
    return Upload(RunId(run), project, "main", Sha(commit), {{"BM", Around(center)}}).dump();
  }
  json Get(const std::string& target, const std::string& token) {
    HttpResponse r = http().Get(target, token);
    EXPECT_EQ(r.status, 200) << target << ": " << Describe(r);
    return r.Json();
  }
};

TEST_F(RunIdsE2eTest, AnotherProjectsRunIdIsAFreshId) {
  CreateProject("a");
  CreateProject("b");
  const std::string token_a = CreateToken("a", {"ingest", "read"});
  const std::string token_b = CreateToken("b", {"ingest", "read"});
  // A: 100 ns, then unchanged. B, with the same two run ids: 500 ns, then twice as slow.
  PostPair("a", token_a, 1, 100, 100, 201);
  PostPair("b", token_b, 11, 500, 1000, 201);

  // Re-posts within B: the same body is the idempotent retry, another body a conflict.
  HttpResponse same = PostRun("b", RunUpload("b", 1, 11, 500), token_b);
  EXPECT_EQ(same.status, 200) << Describe(same);
  EXPECT_EQ(same.Json()["created"], false);
  HttpResponse other = PostRun("b", RunUpload("b", 1, 11, 600), token_b);
  EXPECT_EQ(other.status, 409) << Describe(other);
  EXPECT_EQ(other.ErrorCode(), "CONFLICT");
  // And within A, whose runs B's posts did not touch.
  EXPECT_EQ(PostRun("a", RunUpload("a", 1, 1, 100), token_a).status, 200);
  EXPECT_EQ(PostRun("a", RunUpload("a", 1, 1, 500), token_a).status, 409);
  EXPECT_EQ(RunCount("a"), 2u);
  EXPECT_EQ(RunCount("b"), 2u);

  // Each project reads its own run under the shared id.
  for (const auto& [project, token, sha, center] :
       {std::tuple{"a", token_a, Sha(1), 100.0}, std::tuple{"b", token_b, Sha(11), 500.0}}) {
    SCOPED_TRACE(project);
    const std::string runs = std::string("/api/v1/projects/") + project + "/runs/";
    json run = Get(runs + RunId(1), token);
    EXPECT_EQ(run["run"]["project"], project);
    EXPECT_EQ(run["run"]["commit"], sha);
    EXPECT_EQ(run["upload"]["results"][0]["values"], json(Around(center)));
    EXPECT_TRUE(run["verdict"].is_null());
  }

  // A verdict for each run 2, against its own project's run 1 and samples.
  json verdict_a, verdict_b;
  for (const auto& [project, token, verdict] :
       {std::tuple{"a", token_a, &verdict_a}, std::tuple{"b", token_b, &verdict_b}}) {
    const std::string target = std::string("/api/v1/projects/") + project + "/runs/" + RunId(2);
    HttpResponse r = http().Post(target + "/verdict", "", token);
    ASSERT_EQ(r.status, 201) << project << ": " << Describe(r);
    *verdict = r.Json()["verdict"];
    EXPECT_EQ((*verdict)["baseline"]["run_ids"], json::array({RunId(1)})) << project;
    EXPECT_EQ(Get(target + "/verdict", token)["verdict"]["id"], (*verdict)["id"]) << project;
    EXPECT_EQ(Get(target, token)["verdict"]["id"], (*verdict)["id"]) << project;
  }
  EXPECT_EQ(verdict_a["baseline"]["commit"], Sha(1));
  EXPECT_EQ(verdict_a["outcome"], "pass");
  EXPECT_EQ(verdict_b["baseline"]["commit"], Sha(11));
  EXPECT_EQ(verdict_b["outcome"], "regression");
  EXPECT_NE(verdict_a["id"], verdict_b["id"]);

  // Compare and series read each project's samples only.
  const std::string compare = "/compare?base=" + RunId(1) + "&contender=" + RunId(2);
  json compare_a = Get("/api/v1/projects/a" + compare, token_a);
  json compare_b = Get("/api/v1/projects/b" + compare, token_b);
  EXPECT_NEAR(compare_a["benchmarks"][0]["base"]["median"].get<double>(), 100, 1e-9);
  EXPECT_NEAR(compare_b["benchmarks"][0]["base"]["median"].get<double>(), 500, 1e-9);
  EXPECT_NEAR(compare_b["benchmarks"][0]["contender"]["median"].get<double>(), 1000, 1e-9);
  const std::string series = "/series?benchmark=BM&metric=real_time&branch=main&raw=1";
  json series_a = Get("/api/v1/projects/a" + series, token_a);
  json series_b = Get("/api/v1/projects/b" + series, token_b);
  ASSERT_EQ(series_a["points"].size(), 2u) << series_a.dump();
  ASSERT_EQ(series_b["points"].size(), 2u) << series_b.dump();
  EXPECT_EQ(series_a["points"][1]["runs"], json::array({RunId(2)}));
  EXPECT_EQ(series_a["points"][1]["values"], json(Around(100)));
  EXPECT_EQ(series_b["points"][1]["values"], json(Around(1000)));

  // The history analysis of main, and the Grafana views, keep the projects apart too.
  ASSERT_NO_FATAL_FAILURE(testing::WaitForHistory(dsn_));
  pqxx::connection conn(dsn_);
  pqxx::nontransaction tx(conn);
  EXPECT_EQ(
      tx.exec("SELECT string_agg(project || ':' || commit_sha || ':' || run_count || ':' || "
              "round(value), ',' ORDER BY project, position) FROM perfwarden_views.history")[0][0]
          .as<std::string>(),
      "a:" + Sha(1) + ":1:100,a:" + Sha(2) + ":1:100,b:" + Sha(11) + ":1:500,b:" + Sha(12) +
          ":1:1000");
  EXPECT_EQ(
      tx.exec("SELECT string_agg(project || ':' || commit_sha || ':' || round(value), ',' "
              "ORDER BY project, time) FROM perfwarden_views.series_points")[0][0]
          .as<std::string>(),
      "a:" + Sha(1) + ":100,a:" + Sha(2) + ":100,b:" + Sha(11) + ":500,b:" + Sha(12) + ":1000");
  EXPECT_EQ(tx.exec("SELECT string_agg(project || ':' || commit_sha || ':' || outcome, ',' "
                    "ORDER BY project) FROM perfwarden_views.verdicts WHERE latest")[0][0]
                .as<std::string>(),
            "a:" + Sha(2) + ":pass,b:" + Sha(12) + ":regression");
  EXPECT_EQ(tx.exec("SELECT count(*) FROM perfwarden_views.repetitions")[0][0].as<int>(), 4 * 12);
}

}  // namespace
}  // namespace perfwarden
