// SPDX-License-Identifier: Apache-2.0
// Tokens bound to branches, end to end (issue 27): a pull request's token (scope ingest-pr) may
// post runs and verdicts only for branches its project does not protect; protected branches
// (the server's tracked branches, or the project's own list) take the ingest scope. A refused
// write is 403 naming the branch rule, and nothing is stored. Real server, real PostgreSQL.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/api_e2e_fixture.h"

namespace perfwarden {
namespace {

using api_e2e::ApiE2eTest;
using api_e2e::Describe;
using api_e2e::RunId;
using api_e2e::Sha;
using api_e2e::Upload;
using nlohmann::json;
using testing::HttpResponse;

std::string RunBody(int n, const std::string& branch) {
  return Upload(RunId(n), "p", branch, Sha(n), {{"BM_A", {10, 11, 10, 12, 11}}}).dump();
}

TEST_F(ApiE2eTest, APullRequestTokenPostsItsBranchButNotAProtectedOne) {
  CreateProject("p");
  const std::string pr = CreateToken("p", {"ingest-pr"});
  const std::string full = CreateToken("p", {"ingest"});

  // The project names none: the server's tracked branches (main, master) are protected.
  HttpResponse project = http().Get("/api/v1/projects/p", admin_);
  ASSERT_EQ(project.status, 200) << Describe(project);
  EXPECT_EQ(project.Json()["project"]["protected_branches"], json({"main", "master"}));
  EXPECT_EQ(project.Json()["project"]["protected_branches_from"], "server");

  EXPECT_EQ(PostRun("p", RunBody(1, "feature/x"), pr).status, 201);
  for (const std::string branch : {"main", "master"}) {
    HttpResponse refused = PostRun("p", RunBody(2, branch), pr);
    EXPECT_EQ(refused.status, 403) << Describe(refused);
    EXPECT_EQ(refused.ErrorCode(), "PERMISSION_DENIED");
    EXPECT_EQ(refused.Json()["error"]["field"], "branch") << Describe(refused);
    const std::string message = refused.Json()["error"]["message"].get<std::string>();
    EXPECT_NE(message.find("\"" + branch + "\" is protected"), std::string::npos) << message;
    EXPECT_NE(message.find("ingest-pr"), std::string::npos) << message;
  }
  // Nothing of the refused runs was stored: only the feature branch's run, and no branch main.
  EXPECT_EQ(RunCount("p"), 1u);
  HttpResponse branches = http().Get("/api/v1/projects/p/branches", admin_);
  ASSERT_EQ(branches.status, 200) << Describe(branches);
  EXPECT_EQ(branches.body.find("\"main\""), std::string::npos) << branches.body;

  // The target branch's token writes main; a reader of main sees it.
  EXPECT_EQ(PostRun("p", RunBody(2, "main"), full).status, 201);
  EXPECT_EQ(RunCount("p"), 2u);
  // An ingest-pr token cannot re-post (or amend) a run of main either, even an identical one.
  EXPECT_EQ(PostRun("p", RunBody(2, "main"), pr).status, 403);
  // Nor judge one: the verdict route checks the run's branch before it computes or stores.
  HttpResponse verdict = http().Post("/api/v1/projects/p/runs/" + RunId(2) + "/verdict", "{}", pr);
  EXPECT_EQ(verdict.status, 403) << Describe(verdict);
  EXPECT_EQ(verdict.Json()["error"]["field"], "branch");
  EXPECT_EQ(http().Get("/api/v1/projects/p/runs/" + RunId(2) + "/verdict", admin_).status, 404);
  // Its own run's verdict it may compute.
  HttpResponse own = http().Post("/api/v1/projects/p/runs/" + RunId(1) + "/verdict", "{}", pr);
  EXPECT_LT(own.status, 300) << Describe(own);
  // Bisects measure main's history: they need ingest, ingest-pr is not enough.
  HttpResponse claim =
      http().Post("/api/v1/projects/p/bisect-steps/claim", json{{"testbed", "bed-1"}}.dump(), pr);
  EXPECT_EQ(claim.status, 403) << Describe(claim);
  // And it reads nothing: ingest-pr is a write scope.
  EXPECT_EQ(http().Get("/api/v1/projects/p/runs", pr).status, 403);
}

TEST_F(ApiE2eTest, AProjectNamesItsOwnProtectedBranches) {
  CreateProject("p");
  const std::string pr = CreateToken("p", {"ingest-pr"});
  HttpResponse patched =
      http().Request("PATCH", "/api/v1/projects/p", admin_,
                     json{{"protected_branches", {"trunk", "release/*"}}}.dump());
  ASSERT_EQ(patched.status, 200) << Describe(patched);
  EXPECT_EQ(patched.Json()["project"]["protected_branches"], json({"trunk", "release/*"}));
  EXPECT_EQ(patched.Json()["project"]["protected_branches_from"], "project");

  EXPECT_EQ(PostRun("p", RunBody(1, "main"), pr).status, 201);  // no longer protected here
  EXPECT_EQ(PostRun("p", RunBody(2, "trunk"), pr).status, 403);
  EXPECT_EQ(PostRun("p", RunBody(3, "release/1.2"), pr).status, 403);
  EXPECT_EQ(PostRun("p", RunBody(4, "release-notes"), pr).status, 201);
  EXPECT_EQ(RunCount("p"), 2u);

  // null: back to the server's default.
  patched = http().Request("PATCH", "/api/v1/projects/p", admin_,
                           json{{"protected_branches", nullptr}}.dump());
  ASSERT_EQ(patched.status, 200) << Describe(patched);
  EXPECT_EQ(patched.Json()["project"]["protected_branches_from"], "server");
  EXPECT_EQ(PostRun("p", RunBody(5, "main"), pr).status, 403);
  EXPECT_EQ(PostRun("p", RunBody(6, "trunk"), pr).status, 201);

  // Only an admin changes the rule, and a bad rule is refused naming the entry.
  HttpResponse by_pr = http().Request("PATCH", "/api/v1/projects/p", pr,
                                      json{{"protected_branches", json::array()}}.dump());
  EXPECT_EQ(by_pr.status, 403) << Describe(by_pr);
  HttpResponse bad = http().Request("PATCH", "/api/v1/projects/p", admin_,
                                    json{{"protected_branches", {"ok", 7}}}.dump());
  EXPECT_EQ(bad.status, 400) << Describe(bad);
  EXPECT_EQ(bad.Json()["error"]["field"], "protected_branches[1]");
  HttpResponse unknown =
      http().Request("PATCH", "/api/v1/projects/p", admin_, json{{"owner", "x"}}.dump());
  EXPECT_EQ(unknown.status, 400) << Describe(unknown);

  // A project may be created with its rule.
  HttpResponse created = http().Post(
      "/api/v1/projects", json{{"name", "q"}, {"protected_branches", {"stable"}}}.dump(), admin_);
  ASSERT_EQ(created.status, 201) << Describe(created);
  EXPECT_EQ(created.Json()["project"]["protected_branches"], json({"stable"}));
}

}  // namespace
}  // namespace perfwarden
