// SPDX-License-Identifier: Apache-2.0
// API v1 end to end on what it must refuse or survive (tests/testing/api_e2e_fixture.h): the auth
// matrix, the bad-input matrix (each rejection must also store nothing), SQL-looking strings
// stored verbatim, and a PostgreSQL restart (503, then recovery). No assertion depends on timing.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/api_e2e_fixture.h"

namespace perfwarden {
namespace {

using api_e2e::ApiE2eTest;
using api_e2e::Describe;
using api_e2e::kBodyLimit;
using api_e2e::RunId;
using api_e2e::Sha;
using api_e2e::Upload;
using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;

// --- Auth matrix ------------------------------------------------------------------------------

TEST_F(ApiE2eTest, AuthMatrix) {
  CreateProject("a");
  CreateProject("b");
  CreateProject("pub", /*public_read=*/true);
  const std::string ingest_a = CreateToken("a", {"ingest"});
  const std::string read_a = CreateToken("a", {"read"});
  const std::string read_b = CreateToken("b", {"read"});
  const std::string ingest_pub = CreateToken("pub", {"ingest"});
  json revoked_answer;
  const std::string revoked_a = CreateToken("a", {"ingest", "read"}, &revoked_answer);
  ASSERT_EQ(
      http()
          .Delete("/api/v1/tokens/" + std::to_string(revoked_answer["id"].get<int64_t>()), admin_)
          .status,
      200);
  auto unknown = auth::GenerateToken();
  ASSERT_TRUE(unknown.has_value());
  ASSERT_EQ(
      PostRun("pub", Upload(RunId(1), "pub", "main", Sha(1), {{"BM", {1}}}).dump(), ingest_pub)
          .status,
      201);

  const std::string run_a = Upload(RunId(2), "a", "main", Sha(2), {{"BM", {1}}}).dump();
  const std::string run_b = Upload(RunId(3), "b", "main", Sha(3), {{"BM", {1}}}).dump();
  struct Case {
    std::string name;
    std::string method;
    std::string target;
    std::string authorization;  // the whole header value; "" = no header
    std::string body;
    int status;
  };
  auto bearer = [](const std::string& token) { return "Bearer " + token; };
  const std::vector<Case> cases = {
      {"no token", "GET", "/api/v1/projects/a/runs", "", "", 401},
      {"garbage bearer", "GET", "/api/v1/projects/a/runs", "Bearer garbage", "", 401},
      {"basic scheme", "GET", "/api/v1/projects/a/runs", "Basic dXNlcjpwYXNz", "", 401},
      {"empty bearer", "GET", "/api/v1/projects/a/runs", "Bearer ", "", 401},
      {"unknown token", "GET", "/api/v1/projects/a/runs", bearer(*unknown), "", 401},
      {"revoked token", "GET", "/api/v1/projects/a/runs", bearer(revoked_a), "", 401},
      {"revoked token posts", "POST", "/api/v1/projects/a/runs", bearer(revoked_a), run_a, 401},
      {"other project's token", "GET", "/api/v1/projects/a/runs", bearer(read_b), "", 403},
      {"other project's token, run", "GET", "/api/v1/projects/a/runs/" + RunId(2), bearer(read_b),
       "", 403},
      {"ingest token posts elsewhere", "POST", "/api/v1/projects/b/runs", bearer(ingest_a), run_b,
       403},
      {"read token posts a run", "POST", "/api/v1/projects/a/runs", bearer(read_a), run_a, 403},
      {"ingest token reads", "GET", "/api/v1/projects/a/runs", bearer(ingest_a), "", 403},
      {"no token posts a run", "POST", "/api/v1/projects/a/runs", "", run_a, 401},
      {"read token creates a project", "POST", "/api/v1/projects", bearer(read_a),
       R"({"name":"c"})", 403},
      {"no token creates a project", "POST", "/api/v1/projects", "", R"({"name":"c"})", 401},
      {"read token makes a token", "POST", "/api/v1/projects/a/tokens", bearer(read_a),
       R"({"name":"x","scopes":["admin"]})", 403},
      {"ingest token lists tokens", "GET", "/api/v1/projects/a/tokens", bearer(ingest_a), "", 403},
      {"read token revokes", "DELETE",
       "/api/v1/tokens/" + std::to_string(revoked_answer["id"].get<int64_t>()), bearer(read_a), "",
       403},
      {"public project, no token", "GET", "/api/v1/projects/pub/runs", "", "", 200},
      {"public project series, no token", "GET",
       "/api/v1/projects/pub/series?benchmark=BM&metric=real_time&branch=main", "", "", 200},
      {"public project, garbage token", "GET", "/api/v1/projects/pub/runs", "Bearer garbage", "",
       401},
      {"public project, revoked token", "GET", "/api/v1/projects/pub/runs", bearer(revoked_a), "",
       401},
      {"public project, post without token", "POST", "/api/v1/projects/pub/runs", "",
       Upload(RunId(4), "pub", "main", Sha(4), {{"BM", {1}}}).dump(), 401},
      {"public project, other project's ingest token", "POST", "/api/v1/projects/pub/runs",
       bearer(ingest_a), Upload(RunId(4), "pub", "main", Sha(4), {{"BM", {1}}}).dump(), 403},
      {"private project, other token reads", "GET", "/api/v1/projects/b", bearer(read_a), "", 403},
      {"own read token", "GET", "/api/v1/projects/a/runs", bearer(read_a), "", 200},
      {"admin reads anything", "GET", "/api/v1/projects/b/runs", bearer(admin_), "", 200},
  };
  for (const Case& c : cases) {
    std::vector<std::string> headers;
    if (!c.authorization.empty()) headers.push_back("Authorization: " + c.authorization);
    HttpResponse r = http().Request(c.method, c.target, "", c.body, "application/json", headers);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << Describe(r);
    if (c.status == 401) {
      EXPECT_EQ(r.ErrorCode(), "UNAUTHENTICATED") << c.name;
      EXPECT_EQ(r.headers.count("www-authenticate"), 1u) << c.name;
    } else if (c.status == 403) {
      EXPECT_EQ(r.ErrorCode(), "PERMISSION_DENIED") << c.name;
    }
    // Error bodies never repeat a credential.
    if (!c.authorization.empty() && c.status >= 400 && c.authorization.size() > 10) {
      EXPECT_EQ(r.body.find(c.authorization.substr(7)), std::string::npos) << c.name;
    }
  }
  // Nothing reached the store through the refused posts.
  EXPECT_EQ(RunCount("a"), 0u);
  EXPECT_EQ(RunCount("b"), 0u);
  EXPECT_EQ(RunCount("pub"), 1u);
  // The ingest token still works for its own project.
  EXPECT_EQ(PostRun("a", run_a, ingest_a).status, 201);
}

// --- Bad input matrix -------------------------------------------------------------------------

TEST_F(ApiE2eTest, BadInputIsRejectedAndNothingIsStored) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  const json valid = Upload(RunId(1), "p", "main", Sha(1), {{"BM_A", {1.0, 2.0, 3.0}}});
  auto with = [&](const std::function<void(json&)>& change) {
    json copy = valid;
    change(copy);
    return copy.dump();
  };
  std::string deep = "[]";
  for (int i = 0; i < 200; ++i) deep = "{\"k\":" + deep + "}";
  std::string huge_values = "[";
  for (std::size_t i = 0; huge_values.size() < kBodyLimit + 1024; ++i) {
    huge_values += (i == 0 ? "" : ",") + std::to_string(1000.0 + static_cast<double>(i));
  }
  huge_values += "]";
  const std::string valid_text = valid.dump();
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = valid_text;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };

  struct Case {
    std::string name;
    std::string body;
    int status;
    std::string field;  // expected error.field; "*" = any
    std::string content_type = "application/json";
  };
  const std::vector<Case> cases = {
      {"empty body", "", 400, "*"},
      {"malformed JSON", "{\"id\": ", 400, "*"},
      {"trailing garbage", valid_text + "x", 400, "*"},
      {"not an object", "[1,2,3]", 400, "*"},
      {"id is a number", with([](json& j) { j["id"] = 5; }), 400, "id"},
      {"id is not a UUID", with([](json& j) { j["id"] = "run-1"; }), 400, "id"},
      {"values is a string", with([](json& j) { j["results"][0]["values"] = "1,2"; }), 400,
       "results[0].values"},
      {"value is a string", with([](json& j) { j["results"][0]["values"][1] = "2"; }), 400,
       "results[0].values[1]"},
      {"commit is a string", with([](json& j) { j["commit"] = Sha(1); }), 400, "commit"},
      {"missing results", with([](json& j) { j.erase("results"); }), 400, "results"},
      {"missing commit", with([](json& j) { j.erase("commit"); }), 400, "commit"},
      {"missing sha", with([](json& j) { j["commit"].erase("sha"); }), 400, "commit.sha"},
      {"missing testbed", with([](json& j) { j.erase("testbed"); }), 400, "testbed"},
      {"missing id", with([](json& j) { j.erase("id"); }), 400, "id"},
      {"missing branch", with([](json& j) { j.erase("branch"); }), 400, "branch"},
      {"empty results", with([](json& j) { j["results"] = json::array(); }), 400, "results"},
      {"empty values", with([](json& j) { j["results"][0]["values"] = json::array(); }), 400,
       "results[0].values"},
      {"NaN token", replace("[1.0,2.0,3.0]", "[1.0,NaN,3.0]"), 400, "*"},
      {"Infinity token", replace("[1.0,2.0,3.0]", "[1.0,Infinity,3.0]"), 400, "*"},
      {"number too large", replace("[1.0,2.0,3.0]", "[1.0,1e999,3.0]"), 400, "*"},
      {"negative time", with([](json& j) { j["results"][0]["values"][2] = -1.0; }), 400,
       "results[0].values[2]"},
      {"unknown direction", with([](json& j) { j["results"][0]["direction"] = "sideways"; }), 400,
       "results[0].direction"},
      {"unknown key", with([](json& j) { j["resluts"] = json::array(); }), 400, "resluts"},
      {"duplicate series", with([](json& j) { j["results"].push_back(j["results"][0]); }), 400,
       "*"},
      {"project mismatch", with([](json& j) { j["project"] = "other"; }), 400, "project"},
      {"bad branch name", with([](json& j) { j["branch"] = "a/../b c"; }), 400, "branch"},
      {"bad sha", with([](json& j) { j["commit"]["sha"] = "xyz"; }), 400, "commit.sha"},
      {"bad timestamp", with([](json& j) { j["started_at"] = "2024-02-30T00:00:00Z"; }), 400,
       "started_at"},
      {"finished before started", with([](json& j) {
         j["started_at"] = "2024-03-01T12:00:00Z";
         j["finished_at"] = "2024-03-01T11:00:00Z";
       }),
       400, "finished_at"},
      {"deep nesting", replace("{\"cores\":2}", deep), 400, "*"},
      {"invalid UTF-8", replace("\"commit ", "\"commit \xff\xfe "), 400, "*"},
      {"overlong UTF-8", replace("\"commit ", "\"commit \xc0\xaf "), 400, "*"},
      {"lone surrogate", replace("\"commit ", "\"commit \\ud800 "), 400, "*"},
      {"NUL in a string", replace("\"commit ", "\"commit \\u0000 "), 400, "*"},
      {"duplicate key", replace("{\"branch\":", "{\"branch\":\"x\",\"branch\":"), 400, "*"},
      {"oversized body", replace("[1.0,2.0,3.0]", huge_values), 413, "*"},
      {"wrong content type", valid_text, 415, "*", "text/plain"},
  };
  for (const Case& c : cases) {
    HttpResponse r =
        http().Request("POST", "/api/v1/projects/p/runs", token, c.body, c.content_type);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << Describe(r);
    json body = r.Json();
    ASSERT_TRUE(body.is_object() && body["error"].is_object()) << c.name << ": " << r.body;
    EXPECT_TRUE(body["error"]["code"].is_string()) << c.name;
    EXPECT_TRUE(body["error"]["message"].is_string()) << c.name;
    EXPECT_TRUE(body["error"].contains("field")) << c.name;
    const std::map<int, std::string> codes = {
        {400, "INVALID_ARGUMENT"}, {413, "PAYLOAD_TOO_LARGE"}, {415, "UNSUPPORTED_MEDIA_TYPE"}};
    EXPECT_EQ(r.ErrorCode(), codes.at(c.status)) << c.name;
    if (c.field != "*") {
      EXPECT_EQ(r.ErrorField(), c.field) << c.name << ": " << r.body;
    }
    ASSERT_EQ(RunCount("p"), 0u) << "stored after: " << c.name;
  }
  EXPECT_EQ(BenchmarkCount("p"), 0u);

  // Bad project-creation and token bodies too.
  for (const std::string& body :
       {std::string("{"), std::string(R"({"name": 5})"), std::string(R"({"public_read": true})"),
        std::string(R"({"name": "x", "public_read": "yes"})"), std::string(R"({"name": ""})")}) {
    HttpResponse r = http().Post("/api/v1/projects", body, admin_);
    EXPECT_EQ(r.status, 400) << body << ": " << Describe(r);
  }
  HttpResponse projects = http().Get("/api/v1/projects", admin_);
  EXPECT_EQ(projects.Json()["projects"].size(), 1u) << projects.body;

  // The id was never consumed: the valid upload is created now.
  HttpResponse ok = PostRun("p", valid_text, token);
  EXPECT_EQ(ok.status, 201) << Describe(ok);
  EXPECT_EQ(RunCount("p"), 1u);
}

TEST_F(ApiE2eTest, SqlLookingStringsAreStoredVerbatim) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  const std::string suite = "x'); DROP TABLE samples; --";
  const std::string benchmark = "Robert'); DROP TABLE runs;-- \"quoted\" \\ back";
  const std::string metric = "real_time' OR '1'='1";
  json upload = Upload(RunId(1), "p", "main", Sha(1), {{benchmark, {1.0, 2.0}, metric}});
  upload["results"][0]["suite"] = suite;
  upload["commit"]["subject"] = "'; DELETE FROM projects; -- $1 %s";
  upload["commit"]["author"] = "O'Brien <ob@example.com>";
  upload["testbed"]["fingerprint"] = {{"cpu_model", "'); TRUNCATE tokens; --"}};
  HttpResponse created = PostRun("p", upload.dump(), token);
  ASSERT_EQ(created.status, 201) << Describe(created);

  HttpResponse got = http().Get("/api/v1/projects/p/runs/" + RunId(1), token);
  ASSERT_EQ(got.status, 200) << Describe(got);
  json stored = got.Json()["upload"];
  EXPECT_EQ(stored["results"][0]["suite"], suite);
  EXPECT_EQ(stored["results"][0]["benchmark"], benchmark);
  EXPECT_EQ(stored["results"][0]["metric"], metric);
  EXPECT_EQ(stored["commit"]["subject"], upload["commit"]["subject"]);
  EXPECT_EQ(stored["commit"]["author"], upload["commit"]["author"]);
  EXPECT_EQ(stored["testbed"]["fingerprint"], upload["testbed"]["fingerprint"]);

  HttpResponse benchmarks = http().Get("/api/v1/projects/p/benchmarks", token);
  ASSERT_EQ(benchmarks.status, 200);
  EXPECT_EQ(benchmarks.Json()["benchmarks"],
            (json{{{"suite", suite},
                   {"name", benchmark},
                   {"metrics", {{{"name", metric}, {"unit", "ns"}, {"direction", "lower"}}}}}}));

  // A SQL-looking filter matches nothing (or is refused), never everything.
  HttpResponse filtered =
      http().Get("/api/v1/projects/p/runs?branch=main%27%20OR%20%271%27%3D%271", token);
  EXPECT_TRUE(filtered.status == 400 || (filtered.status == 200 && filtered.Json()["runs"].empty()))
      << Describe(filtered);
  // Everything is still there.
  EXPECT_EQ(RunCount("p"), 1u);
  EXPECT_EQ(http().Get("/api/v1/projects/p/tokens", admin_).Json()["tokens"].size(), 1u);
  EXPECT_EQ(http().Get("/api/v1/projects", admin_).Json()["projects"].size(), 1u);
}

// --- PostgreSQL outage ----------------------------------------------------------------------

TEST_F(ApiE2eTest, PostgresRestartGives503ThenRecovers) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  ASSERT_EQ(
      PostRun("p", Upload(RunId(1), "p", "main", Sha(1), {{"BM", {1, 2}}}).dump(), token).status,
      201);
  // Warm several pool connections so that stale ones exist after the restart.
  for (int i = 0; i < 6; ++i) ASSERT_EQ(http().Get("/api/v1/projects/p/runs", token).status, 200);

  ASSERT_TRUE(cluster_->Stop().has_value());
  const std::string during = Upload(RunId(2), "p", "main", Sha(2), {{"BM", {3, 4}}}).dump();
  for (int i = 0; i < 3; ++i) {
    HttpResponse runs = http().Get("/api/v1/projects/p/runs", token);
    EXPECT_EQ(runs.status, 503) << Describe(runs);
    EXPECT_EQ(runs.ErrorCode(), "UNAVAILABLE");
    EXPECT_EQ(runs.headers.count("retry-after"), 1u);
    HttpResponse post = PostRun("p", during, token);
    EXPECT_EQ(post.status, 503) << Describe(post);
    EXPECT_EQ(http().Get("/readyz").status, 503);
    // The process itself is alive.
    EXPECT_EQ(http().Get("/healthz").status, 200);
  }
  // A fresh connection during the outage gets an answer too (no hang on a worker).
  {
    HttpClient other(static_cast<std::uint16_t>(app_->port()));
    EXPECT_EQ(other.Get("/api/v1/projects/p", token).status, 503);
  }

  const auto restarted = cluster_->Start();
  ASSERT_TRUE(restarted.has_value()) << restarted.error().ToString();
  HttpResponse ready = http().Get("/readyz");
  EXPECT_EQ(ready.status, 200) << Describe(ready);
  for (int i = 0; i < 6; ++i) {
    HttpResponse runs = http().Get("/api/v1/projects/p/runs", token);
    EXPECT_EQ(runs.status, 200) << "request " << i << " after restart: " << Describe(runs);
  }
  HttpResponse post = PostRun("p", during, token);
  EXPECT_EQ(post.status, 201) << Describe(post);
  EXPECT_EQ(RunCount("p"), 2u);
  HttpResponse metrics = http().Get("/metrics");
  EXPECT_NE(metrics.body.find("status=\"503\""), std::string::npos);
}

}  // namespace
}  // namespace perfwarden
