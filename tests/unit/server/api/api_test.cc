// API v1 routes through router.Handle() with in-memory fakes of the four store interfaces: the
// auth matrix, each endpoint's shape, the bad-input matrix for POST runs (nothing reaches the
// store), query-parameter checks, series summaries on known data and the compare endpoint.
#include "server/api/api.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "server/api/auth.h"
#include "server/auth/tokens.h"

namespace perfgate::server::api {
namespace {

using nlohmann::json;

class FakeProjects : public store::ProjectStore {
 public:
  Result<store::Project> CreateProject(const std::string& name, bool public_read) override {
    for (const auto& p : projects) {
      if (p.name == name) return MakeError(ErrorCode::kConflict, "project exists");
    }
    projects.push_back(
        {static_cast<int64_t>(projects.size()) + 1, name, public_read, "2024-05-01T10:00:00Z"});
    return projects.back();
  }
  Result<std::vector<store::Project>> ListProjects() override { return projects; }
  Result<store::Project> GetProject(const std::string& name) override {
    for (const auto& p : projects) {
      if (p.name == name) return p;
    }
    return MakeError(ErrorCode::kNotFound, "no such project");
  }
  std::vector<store::Project> projects;
};

class FakeTokens : public store::TokenStore {
 public:
  Result<store::TokenRecord> CreateToken(const store::NewToken& token) override {
    created.push_back(token);
    store::TokenRecord record{next_id++,
                              token.project_id,
                              project_names[token.project_id.value_or(0)],
                              token.name,
                              token.prefix,
                              token.scopes,
                              "2024-05-01T10:00:00Z",
                              false};
    by_hash[token.token_hash] = record;
    return record;
  }
  Result<store::TokenRecord> FindTokenByHash(const std::string& token_hash) override {
    auto it = by_hash.find(token_hash);
    if (it == by_hash.end()) return MakeError(ErrorCode::kNotFound, "no token");
    return it->second;
  }
  Result<std::vector<store::TokenRecord>> ListTokens(std::optional<int64_t> project_id) override {
    std::vector<store::TokenRecord> out;
    for (const auto& [hash, record] : by_hash) {
      if (!project_id || record.project_id == project_id) out.push_back(record);
    }
    return out;
  }
  Result<bool> RevokeToken(int64_t id) override {
    for (auto& [hash, record] : by_hash) {
      if (record.id == id) {
        record.revoked = true;
        return true;
      }
    }
    return false;
  }
  Result<bool> HasAdminToken() override { return true; }

  // Adds a token and returns its plain text.
  std::string Add(std::optional<int64_t> project_id, std::vector<std::string> scopes,
                  bool revoked = false) {
    std::string token = *auth::GenerateToken();
    store::TokenRecord record{next_id++,
                              project_id,
                              project_names[project_id.value_or(0)],
                              "t",
                              token.substr(0, 12),
                              std::move(scopes),
                              "2024-05-01T10:00:00Z",
                              revoked};
    by_hash[*auth::HashToken(token)] = record;
    return token;
  }

  std::map<std::string, store::TokenRecord> by_hash;
  std::vector<store::NewToken> created;
  std::map<int64_t, std::string> project_names;
  int64_t next_id = 1;
};

class FakeRuns : public store::RunStore {
 public:
  Result<store::IngestOutcome> IngestRun(const store::Project& project,
                                         const wire::RunUpload& run) override {
    ++ingest_calls;
    auto it = runs.find(run.id);
    if (it != runs.end()) {
      if (!(it->second.upload == run)) return MakeError(ErrorCode::kConflict, "different body");
      return store::IngestOutcome{false, it->second.summary};
    }
    store::RunSummary summary;
    summary.id = run.id;
    summary.project = project.name;
    summary.branch = run.branch;
    summary.commit_sha = run.commit.sha;
    summary.testbed = run.testbed.name;
    summary.pr = run.ci.pr;
    summary.started_at = run.started_at;
    summary.created_at = "2024-05-01T10:00:00Z";
    summary.sample_count = static_cast<int64_t>(run.SampleCount());
    runs[run.id] = {summary, run, std::nullopt};
    return store::IngestOutcome{true, summary};
  }
  Result<store::RunPage> ListRuns(const store::Project&, const store::RunFilter& filter) override {
    last_filter = filter;
    store::RunPage page;
    for (const auto& [id, run] : runs) page.runs.push_back(run.summary);
    page.next_cursor = "next-page";
    return page;
  }
  Result<store::StoredRun> GetRun(const store::Project& project,
                                  const std::string& run_id) override {
    auto it = runs.find(run_id);
    if (it == runs.end() || it->second.summary.project != project.name) {
      return MakeError(ErrorCode::kNotFound, "no such run");
    }
    return it->second;
  }

  std::map<std::string, store::StoredRun> runs;
  store::RunFilter last_filter;
  int ingest_calls = 0;
};

class FakeSeries : public store::SeriesStore {
 public:
  Result<std::vector<store::BenchmarkInfo>> ListBenchmarks(const store::Project&) override {
    return std::vector<store::BenchmarkInfo>{
        {"gbench", "BM_Sort/1024", {{"real_time", "ns", Direction::kLowerIsBetter}}}};
  }
  Result<std::vector<store::NamedRuns>> ListBranches(const store::Project&) override {
    return std::vector<store::NamedRuns>{{"main", 3, "2024-04-02T01:00:00Z"}, {"old", 0, ""}};
  }
  Result<std::vector<store::NamedRuns>> ListTestbeds(const store::Project&) override {
    return std::vector<store::NamedRuns>{{"ci-x86-1", 3, "2024-04-02T01:00:00Z"}};
  }
  Result<std::vector<store::MetricInfo>> ListMetrics(const store::Project&) override {
    return std::vector<store::MetricInfo>{{"real_time", "ns", Direction::kLowerIsBetter}};
  }
  Result<store::Series> GetSeries(const store::Project&, const store::SeriesQuery& query) override {
    last_query = query;
    store::Series series;
    series.benchmark = {"gbench", query.benchmark, {}};
    series.metric = {query.metric, "ns", Direction::kLowerIsBetter};
    series.branch = query.branch;
    series.points.push_back({std::string(40, 'a'),
                             "first",
                             "Ann",
                             "2024-04-01T00:00:00Z",
                             "2024-04-01T01:00:00Z",
                             {"r1"},
                             {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}});
    series.points.push_back(
        {std::string(40, 'b'), "second", "Bob", "", "2024-04-02T01:00:00Z", {"r2"}, {42}});
    return series;
  }
  store::SeriesQuery last_query;
};

constexpr char kRunId[] = "6f1c0c4e-1111-4222-8333-444455556666";

json ValidUpload() {
  return {{"id", kRunId},
          {"project", "alpha"},
          {"branch", "main"},
          {"commit", {{"sha", std::string(40, 'c')}, {"subject", "speed up sort"}}},
          {"testbed", {{"name", "ci-x86-1"}}},
          {"started_at", "2024-05-01T09:00:00Z"},
          {"finished_at", "2024-05-01T09:05:00Z"},
          {"results",
           {{{"suite", "gbench"},
             {"benchmark", "BM_Sort/1024"},
             {"metric", "real_time"},
             {"unit", "ns"},
             {"direction", "lower"},
             {"values", {1021.5, 1019.2, 1030.8}}}}}};
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    projects_.projects = {{1, "alpha", false, "2024-01-01T00:00:00Z"},
                          {2, "beta", false, "2024-01-01T00:00:00Z"},
                          {3, "pub", true, "2024-01-01T00:00:00Z"}};
    tokens_.project_names = {{0, ""}, {1, "alpha"}, {2, "beta"}, {3, "pub"}};
    admin_ = tokens_.Add(std::nullopt, {"admin"});
    alpha_ = tokens_.Add(1, {"ingest", "read"});
    alpha_read_ = tokens_.Add(1, {"read"});
    alpha_ingest_ = tokens_.Add(1, {"ingest"});
    beta_ = tokens_.Add(2, {"ingest", "read"});
    revoked_ = tokens_.Add(1, {"ingest", "read"}, /*revoked=*/true);
    deps_.projects = &projects_;
    deps_.tokens = &tokens_;
    deps_.runs = &runs_;
    deps_.series = &series_;
    deps_.metrics = &metrics_;
    deps_.database_ready = [this]() -> Result<bool> {
      if (!db_up_) return MakeError(ErrorCode::kUnavailable, "connection refused");
      return true;
    };
    deps_.json_max_depth = 16;
    RegisterRoutes(router_, deps_);
  }

  http::Response Call(const std::string& method, const std::string& target,
                      const std::string& token = "", const std::string& body = "",
                      const std::string& content_type = "application/json") {
    http::Request request;
    request.method = method;
    EXPECT_TRUE(http::ParseTarget(target, request).has_value()) << target;
    if (!token.empty()) request.headers.Set("Authorization", "Bearer " + token);
    if (method == "POST" && !content_type.empty())
      request.headers.Set("Content-Type", content_type);
    request.body = body;
    return router_.Handle(request);
  }

  static json Body(const http::Response& response) { return json::parse(response.body); }
  static std::string Field(const http::Response& response) {
    json field = Body(response)["error"]["field"];
    return field.is_null() ? "" : field.get<std::string>();
  }

  FakeProjects projects_;
  FakeTokens tokens_;
  FakeRuns runs_;
  FakeSeries series_;
  http::Metrics metrics_;
  bool db_up_ = true;
  ApiDeps deps_;
  http::Router router_;
  std::string admin_, alpha_, alpha_read_, alpha_ingest_, beta_, revoked_;
};

// --- auth -----------------------------------------------------------------------------------

TEST_F(ApiTest, AuthMatrixOnAPrivateProject) {
  const std::string runs = "/api/v1/projects/alpha/runs";
  struct Case {
    std::string authorization;  // full header value, "" for none
    int status;
  };
  std::string unknown = *auth::GenerateToken();
  std::vector<Case> cases = {
      {"", 401},
      {"Bearer not-a-token", 401},
      {"Basic dXNlcjpwYXNz", 401},
      {"Bearer", 401},
      {"Bearer " + unknown, 401},
      {"Bearer " + revoked_, 401},
      {"Bearer " + beta_, 403},
      {"Bearer " + alpha_ingest_, 403},
      {"Bearer " + alpha_read_, 200},
      {"Bearer " + alpha_, 200},
      {"Bearer " + admin_, 200},
  };
  for (const auto& c : cases) {
    http::Request request;
    request.method = "GET";
    request.path = runs;
    if (!c.authorization.empty()) request.headers.Set("Authorization", c.authorization);
    http::Response response = router_.Handle(request);
    EXPECT_EQ(response.status, c.status) << c.authorization << " " << response.body;
    if (c.status == 401) {
      EXPECT_EQ(response.headers.Get("WWW-Authenticate").value_or(""), "Bearer");
      EXPECT_EQ(Body(response)["error"]["code"], "UNAUTHENTICATED");
      // The credential never comes back.
      if (c.authorization.size() > 7) {
        EXPECT_EQ(response.body.find(c.authorization.substr(7)), std::string::npos);
      }
    }
    if (c.status == 403) {
      EXPECT_EQ(Body(response)["error"]["code"], "PERMISSION_DENIED");
    }
  }
}

TEST_F(ApiTest, IngestNeedsTheIngestScopeOfThatProject) {
  std::string body = ValidUpload().dump();
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", "", body).status, 401);
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_read_, body).status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", beta_, body).status, 403);
  EXPECT_EQ(runs_.ingest_calls, 0);
  EXPECT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_ingest_, body).status, 201);
}

TEST_F(ApiTest, PublicReadProjectAllowsAnonymousGetsOnly) {
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/runs").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub").status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/benchmarks").status, 200);
  // A token that is sent must still be valid.
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/runs", revoked_).status, 401);
  // A valid token of another project may read a public one.
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/runs", beta_).status, 200);
  // Writes still need a token.
  json upload = ValidUpload();
  upload["project"] = "pub";
  EXPECT_EQ(Call("POST", "/api/v1/projects/pub/runs", "", upload.dump()).status, 401);
  EXPECT_EQ(Call("POST", "/api/v1/projects/pub/runs", beta_, upload.dump()).status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/projects/pub/tokens").status, 401);
  EXPECT_EQ(runs_.ingest_calls, 0);
}

TEST_F(ApiTest, UnknownProjectIsNotFoundOnlyForAdmins) {
  EXPECT_EQ(Call("GET", "/api/v1/projects/nope/runs", admin_).status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/projects/nope/runs").status, 401);
  EXPECT_EQ(Call("GET", "/api/v1/projects/nope/runs", alpha_).status, 403);
}

TEST(ApiAuthRules, CheckAccessTable) {
  store::Project priv{1, "alpha", false, ""};
  store::Project pub{3, "pub", true, ""};
  auto caller = [](std::optional<int64_t> project, auth::ScopeSet scopes) {
    store::TokenRecord token;
    token.project_id = project;
    return std::optional<Caller>(Caller{token, scopes});
  };
  using auth::Scope;
  auto code = [](const Result<void>& r) { return r ? -1 : static_cast<int>(r.error().code); };
  const int ok = -1;
  const int unauth = static_cast<int>(ErrorCode::kUnauthenticated);
  const int denied = static_cast<int>(ErrorCode::kPermissionDenied);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kRead, &priv, true)), unauth);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kRead, &pub, true)), ok);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kRead, &pub, false)), unauth);
  EXPECT_EQ(code(CheckAccess(std::nullopt, Scope::kIngest, &pub, false)), unauth);
  EXPECT_EQ(code(CheckAccess(caller(1, {Scope::kRead}), Scope::kRead, &priv, true)), ok);
  EXPECT_EQ(code(CheckAccess(caller(2, {Scope::kRead}), Scope::kRead, &priv, true)), denied);
  EXPECT_EQ(code(CheckAccess(caller(1, {Scope::kRead}), Scope::kIngest, &priv, false)), denied);
  EXPECT_EQ(code(CheckAccess(caller(1, {Scope::kIngest}), Scope::kAdmin, nullptr, false)), denied);
  EXPECT_EQ(code(CheckAccess(caller(std::nullopt, {Scope::kAdmin}), Scope::kIngest, &priv, false)),
            ok);
  EXPECT_EQ(code(CheckAccess(caller(std::nullopt, {Scope::kAdmin}), Scope::kAdmin, nullptr, false)),
            ok);
}

// --- projects and tokens ----------------------------------------------------------------------

TEST_F(ApiTest, CreateProject) {
  auto response =
      Call("POST", "/api/v1/projects", admin_, R"({"name":"gamma","public_read":true})");
  ASSERT_EQ(response.status, 201) << response.body;
  json project = Body(response)["project"];
  EXPECT_EQ(project["name"], "gamma");
  EXPECT_EQ(project["public_read"], true);
  EXPECT_TRUE(project["created_at"].is_string());

  EXPECT_EQ(Call("POST", "/api/v1/projects", admin_, R"({"name":"gamma"})").status, 409);
  EXPECT_EQ(Call("POST", "/api/v1/projects", alpha_, R"({"name":"delta"})").status, 403);
  EXPECT_EQ(Call("POST", "/api/v1/projects", "", R"({"name":"delta"})").status, 401);
  auto bad = Call("POST", "/api/v1/projects", admin_, R"({"name":"a/b"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Field(bad), "name");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({"name":7})")), "name");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({})")), "name");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({"name":"x","public_read":"yes"})")),
            "public_read");
  EXPECT_EQ(Field(Call("POST", "/api/v1/projects", admin_, R"({"name":"x","nmae":1})")), "nmae");
  auto wrong_type = Call("POST", "/api/v1/projects", admin_, R"({"name":"x"})", "text/plain");
  EXPECT_EQ(wrong_type.status, 415);
  EXPECT_EQ(Body(wrong_type)["error"]["code"], "UNSUPPORTED_MEDIA_TYPE");
  EXPECT_EQ(projects_.projects.size(), 4u);
}

TEST_F(ApiTest, ListProjectsByCaller) {
  auto names = [&](const std::string& token) {
    std::vector<std::string> out;
    auto response = Call("GET", "/api/v1/projects", token);
    EXPECT_EQ(response.status, 200);
    json body = Body(response);
    for (const auto& p : body["projects"]) out.push_back(p["name"]);
    return out;
  };
  EXPECT_EQ(names(admin_), (std::vector<std::string>{"alpha", "beta", "pub"}));
  EXPECT_EQ(names(alpha_), (std::vector<std::string>{"alpha", "pub"}));
  EXPECT_EQ(names(""), (std::vector<std::string>{"pub"}));
  EXPECT_EQ(Call("GET", "/api/v1/projects", revoked_).status, 401);
  auto one = Call("GET", "/api/v1/projects/alpha", alpha_read_);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(Body(one)["project"]["name"], "alpha");
  EXPECT_EQ(Body(one)["project"]["public_read"], false);
}

TEST_F(ApiTest, TokenIsShownOnceAndOnlyItsHashIsStored) {
  auto response = Call("POST", "/api/v1/projects/alpha/tokens", admin_,
                       R"({"name":"ci","scopes":["read","ingest"]})");
  ASSERT_EQ(response.status, 201) << response.body;
  json body = Body(response);
  std::string token = body["token"];
  EXPECT_TRUE(auth::IsWellFormedToken(token));
  EXPECT_EQ(body["name"], "ci");
  EXPECT_EQ(body["project"], "alpha");
  EXPECT_EQ(body["scopes"], json({"ingest", "read"}));
  EXPECT_EQ(token.substr(0, body["prefix"].get<std::string>().size()), body["prefix"]);
  ASSERT_EQ(tokens_.created.size(), 1u);
  EXPECT_EQ(tokens_.created[0].token_hash, *auth::HashToken(token));
  EXPECT_EQ(tokens_.created[0].project_id, 1);
  EXPECT_LT(tokens_.created[0].prefix.size(), token.size());

  // The new token works, and listing never shows it.
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", token).status, 200);
  auto list = Call("GET", "/api/v1/projects/alpha/tokens", admin_);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find(token), std::string::npos);
  json listed = Body(list);
  for (const auto& t : listed["tokens"]) {
    EXPECT_FALSE(t.contains("token"));
    for (const char* key : {"id", "name", "prefix", "scopes", "project", "created_at", "revoked"}) {
      EXPECT_TRUE(t.contains(key)) << key;
    }
  }
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/tokens", alpha_).status, 403);

  // Revoke it: 200, then the token is refused; an unknown id is 404.
  std::string id = std::to_string(body["id"].get<int64_t>());
  auto revoked = Call("DELETE", "/api/v1/tokens/" + id, admin_);
  EXPECT_EQ(revoked.status, 200);
  EXPECT_EQ(Body(revoked)["revoked"], true);
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/runs", token).status, 401);
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/9999", admin_).status, 404);
  EXPECT_EQ(Field(Call("DELETE", "/api/v1/tokens/abc", admin_)), "id");
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/1", alpha_).status, 403);
}

TEST_F(ApiTest, TokenRequestValidation) {
  const std::string path = "/api/v1/projects/alpha/tokens";
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"name":"ci","scopes":["admin"]})")), "scopes[0]");
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"name":"ci","scopes":["write"]})")), "scopes[0]");
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"name":"ci","scopes":[]})")), "scopes");
  EXPECT_EQ(Field(Call("POST", path, admin_, R"({"scopes":["read"]})")), "name");
  EXPECT_EQ(
      Call("POST", "/api/v1/projects/nope/tokens", admin_, R"({"name":"ci","scopes":["read"]})")
          .status,
      404);
  EXPECT_TRUE(tokens_.created.empty());
}

// --- runs -----------------------------------------------------------------------------------

TEST_F(ApiTest, IngestIsIdempotent) {
  const std::string path = "/api/v1/projects/alpha/runs";
  auto first = Call("POST", path, alpha_, ValidUpload().dump());
  ASSERT_EQ(first.status, 201) << first.body;
  json body = Body(first);
  EXPECT_EQ(body["created"], true);
  json run = body["run"];
  EXPECT_EQ(run["id"], kRunId);
  EXPECT_EQ(run["project"], "alpha");
  EXPECT_EQ(run["branch"], "main");
  EXPECT_EQ(run["commit"], std::string(40, 'c'));
  EXPECT_EQ(run["testbed"], "ci-x86-1");
  EXPECT_TRUE(run["pr"].is_null());
  EXPECT_TRUE(run["finished_at"].is_null());  // the fake does not keep it: null, not ""
  EXPECT_EQ(run["sample_count"], 3);

  auto again = Call("POST", path, alpha_, ValidUpload().dump());
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(Body(again)["created"], false);

  json changed = ValidUpload();
  changed["results"][0]["values"][0] = 1.0;
  EXPECT_EQ(Call("POST", path, alpha_, changed.dump()).status, 409);
  EXPECT_NE(metrics_.Render().find("perfgate_ingested_samples_total 3"), std::string::npos)
      << metrics_.Render();
}

TEST_F(ApiTest, BadUploadsAreRefusedBeforeTheStore) {
  const std::string path = "/api/v1/projects/alpha/runs";
  auto with = [](const std::function<void(json&)>& change) {
    json upload = ValidUpload();
    change(upload);
    return upload.dump();
  };
  std::string deep = std::string(100, '[') + std::string(100, ']');
  std::string deep_in_ci = with([](json&) {});
  deep_in_ci.insert(deep_in_ci.size() - 1, ",\"ci\":{\"x\":" + deep + "}");
  std::string nan_token = with([](json&) {});
  nan_token.replace(nan_token.find("1021.5"), 6, "NaN");
  std::string bad_utf8 = with([](json& u) { u["commit"]["subject"] = "PLACEHOLDER"; });
  bad_utf8.replace(bad_utf8.find("PLACEHOLDER"), 11, "ab\xC3\x28yz");
  struct Case {
    std::string name;
    std::string body;
    std::string field;
  };
  std::vector<Case> cases = {
      {"malformed", "{\"id\": ", ""},
      {"not an object", "[1,2]", ""},
      {"empty", "", ""},
      {"wrong type", with([](json& u) { u["results"][0]["values"] = "fast"; }),
       "results[0].values"},
      {"wrong element type", with([](json& u) { u["results"][0]["values"][1] = "x"; }),
       "results[0].values[1]"},
      {"missing results", with([](json& u) { u.erase("results"); }), "results"},
      {"missing id", with([](json& u) { u.erase("id"); }), "id"},
      {"missing branch", with([](json& u) { u.erase("branch"); }), "branch"},
      {"NaN token", nan_token, ""},
      {"negative time", with([](json& u) { u["results"][0]["values"][2] = -1.0; }),
       "results[0].values[2]"},
      {"unknown direction", with([](json& u) { u["results"][0]["direction"] = "sideways"; }),
       "results[0].direction"},
      {"deep nesting", deep_in_ci, ""},
      {"deep root", deep, ""},
      {"invalid UTF-8", bad_utf8, ""},
      {"project mismatch", with([](json& u) { u["project"] = "beta"; }), "project"},
      {"unknown field", with([](json& u) { u["brnach"] = "main"; }), "brnach"},
      {"bad time", with([](json& u) { u["started_at"] = "yesterday"; }), "started_at"},
  };
  for (const auto& c : cases) {
    auto response = Call("POST", path, alpha_, c.body);
    EXPECT_EQ(response.status, 400) << c.name << ": " << response.body;
    if (response.status == 400) {
      EXPECT_EQ(Body(response)["error"]["code"], "INVALID_ARGUMENT") << c.name;
      if (!c.field.empty()) {
        EXPECT_EQ(Field(response), c.field) << c.name << ": " << response.body;
      }
    }
  }
  auto no_type = Call("POST", path, alpha_, ValidUpload().dump(), "");
  EXPECT_EQ(no_type.status, 415);
  EXPECT_EQ(runs_.ingest_calls, 0);
}

TEST_F(ApiTest, SqlLookingStringsAreStoredVerbatim) {
  const std::string sql = "x'); DROP TABLE runs; --";
  json upload = ValidUpload();
  upload["commit"]["subject"] = sql;
  upload["results"][0]["benchmark"] = "BM_" + sql;
  auto response = Call("POST", "/api/v1/projects/alpha/runs", alpha_, upload.dump());
  ASSERT_EQ(response.status, 201) << response.body;
  const auto& stored = runs_.runs.at(kRunId).upload;
  EXPECT_EQ(stored.commit.subject, sql);
  EXPECT_EQ(stored.results[0].benchmark, "BM_" + sql);
}

TEST_F(ApiTest, ListAndGetRuns) {
  ASSERT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_, ValidUpload().dump()).status, 201);
  std::string sha(40, 'C');
  auto list =
      Call("GET",
           "/api/v1/projects/alpha/runs?branch=main&commit=" + sha +
               "&testbed=ci-x86-1&since=2024-01-01T00:00:00Z&until=2024-12-31T23:59:59%2B02:00"
               "&limit=10&cursor=abc",
           alpha_read_);
  ASSERT_EQ(list.status, 200) << list.body;
  json body = Body(list);
  EXPECT_EQ(body["runs"].size(), 1u);
  EXPECT_EQ(body["next_cursor"], "next-page");
  EXPECT_EQ(runs_.last_filter.branch, "main");
  EXPECT_EQ(runs_.last_filter.commit, std::string(40, 'c'));
  EXPECT_EQ(runs_.last_filter.until, "2024-12-31T23:59:59+02:00");
  EXPECT_EQ(runs_.last_filter.limit, 10);
  EXPECT_EQ(runs_.last_filter.cursor, "abc");

  auto one = Call("GET", std::string("/api/v1/projects/alpha/runs/") + kRunId, alpha_read_);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(Body(one)["run"]["id"], kRunId);
  EXPECT_EQ(Body(one)["upload"]["results"][0]["values"], json({1021.5, 1019.2, 1030.8}));
  EXPECT_EQ(Body(one)["upload"]["project"], "alpha");
  EXPECT_EQ(
      Call("GET", "/api/v1/projects/alpha/runs/00000000-0000-0000-0000-000000000000", alpha_read_)
          .status,
      404);
  // Another project's token cannot read it through its own project either.
  EXPECT_EQ(Call("GET", std::string("/api/v1/projects/beta/runs/") + kRunId, beta_).status, 404);
}

TEST_F(ApiTest, QueryParametersAreChecked) {
  struct Case {
    std::string target;
    std::string field;
  };
  std::vector<Case> cases = {
      {"/api/v1/projects/alpha/runs?brnach=main", "brnach"},
      {"/api/v1/projects/alpha/runs?branch=a&branch=b", "branch"},
      {"/api/v1/projects/alpha/runs?limit=0", "limit"},
      {"/api/v1/projects/alpha/runs?limit=1001", "limit"},
      {"/api/v1/projects/alpha/runs?limit=ten", "limit"},
      {"/api/v1/projects/alpha/runs?since=2024-02-30T00:00:00Z", "since"},
      {"/api/v1/projects/alpha/runs?until=2024-01-01", "until"},
      {"/api/v1/projects/alpha/runs?commit=abc", "commit"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m", "branch"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main&raw=2", "raw"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main&limit=10001", "limit"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main&bogus=1", "bogus"},
      {"/api/v1/projects/alpha/compare?base=x", "contender"},
      {"/api/v1/projects/alpha/compare?base=x&contender=y&threshold=5", "threshold"},
      {"/api/v1/projects/alpha/compare?base=x&contender=y&alpha=2", "alpha"},
      {"/api/v1/projects/alpha?verbose=1", "verbose"},
      {"/healthz?x=1", "x"},
  };
  for (const auto& c : cases) {
    auto response = Call("GET", c.target, alpha_);
    EXPECT_EQ(response.status, 400) << c.target << ": " << response.body;
    EXPECT_EQ(Field(response), c.field) << c.target;
  }
}

// --- dashboards -----------------------------------------------------------------------------

TEST_F(ApiTest, SeriesSummaries) {
  auto response = Call("GET",
                       "/api/v1/projects/alpha/series?benchmark=BM_Sort%2F1024&metric=real_time"
                       "&branch=main&testbed=ci-x86-1&raw=1",
                       alpha_read_);
  ASSERT_EQ(response.status, 200) << response.body;
  json body = Body(response);
  EXPECT_EQ(series_.last_query.benchmark, "BM_Sort/1024");
  EXPECT_EQ(series_.last_query.testbed, "ci-x86-1");
  EXPECT_EQ(series_.last_query.limit, 1000);
  EXPECT_EQ(body["benchmark"], "BM_Sort/1024");
  EXPECT_EQ(body["suite"], "gbench");
  EXPECT_EQ(body["metric"], "real_time");
  EXPECT_EQ(body["unit"], "ns");
  EXPECT_EQ(body["direction"], "lower");
  EXPECT_EQ(body["branch"], "main");
  ASSERT_EQ(body["points"].size(), 2u);
  json p = body["points"][0];
  EXPECT_EQ(p["commit"], std::string(40, 'a'));
  EXPECT_EQ(p["subject"], "first");
  EXPECT_EQ(p["time"], "2024-04-01T01:00:00Z");
  EXPECT_EQ(p["runs"], json({"r1"}));
  EXPECT_EQ(p["n"], 10);
  EXPECT_DOUBLE_EQ(p["median"].get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(p["min"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(p["max"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(p["mean"].get<double>(), 5.5);
  EXPECT_NEAR(p["p95"].get<double>(), 9.55, 1e-12);  // numpy.percentile(1..10, 95)
  EXPECT_NEAR(p["q1"].get<double>(), 3.25, 1e-12);   // numpy.percentile(1..10, 25)
  EXPECT_NEAR(p["q3"].get<double>(), 7.75, 1e-12);   // numpy.percentile(1..10, 75)
  // mean +/- t(0.975, 9) * s / sqrt(10) (scipy.stats.t.interval)
  EXPECT_NEAR(p["ci"][0].get<double>(), 3.3341494103866087, 1e-9);
  EXPECT_NEAR(p["ci"][1].get<double>(), 7.665850589613392, 1e-9);
  EXPECT_EQ(p["values"].size(), 10u);
  json single = body["points"][1];
  EXPECT_TRUE(single["ci"].is_null());
  EXPECT_TRUE(single["author_time"].is_null());
  EXPECT_DOUBLE_EQ(single["p95"].get<double>(), 42);
  EXPECT_DOUBLE_EQ(single["q1"].get<double>(), 42);

  auto plain =
      Call("GET", "/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main", alpha_read_);
  EXPECT_FALSE(Body(plain)["points"][0].contains("values"));
}

TEST_F(ApiTest, BenchmarksAndMetrics) {
  auto benchmarks = Call("GET", "/api/v1/projects/alpha/benchmarks", alpha_read_);
  ASSERT_EQ(benchmarks.status, 200);
  EXPECT_EQ(Body(benchmarks)["benchmarks"], json::parse(R"([{"suite":"gbench","name":"BM_Sort/1024",
                "metrics":[{"name":"real_time","unit":"ns","direction":"lower"}]}])"));
  auto metrics = Call("GET", "/api/v1/projects/alpha/metrics", alpha_read_);
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(Body(metrics)["metrics"],
            json::parse(R"([{"name":"real_time","unit":"ns","direction":"lower"}])"));
  auto branches = Call("GET", "/api/v1/projects/alpha/branches", alpha_read_);
  ASSERT_EQ(branches.status, 200);
  EXPECT_EQ(Body(branches)["branches"],
            json::parse(R"([{"name":"main","runs":3,"last_run_at":"2024-04-02T01:00:00Z"},
                            {"name":"old","runs":0,"last_run_at":null}])"));
  auto testbeds = Call("GET", "/api/v1/projects/alpha/testbeds", alpha_read_);
  ASSERT_EQ(testbeds.status, 200);
  EXPECT_EQ(Body(testbeds)["testbeds"][0]["name"], "ci-x86-1");
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/branches").status, 401);
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/testbeds?x=1", alpha_read_).status, 400);
}

TEST_F(ApiTest, CompareFindsAPlantedRegression) {
  auto upload = [](const std::string& id, double slowdown) {
    json u = ValidUpload();
    u["id"] = id;
    json results = json::array();
    for (const std::string name : {"BM_A", "BM_B", "BM_C"}) {
      json values = json::array();
      for (int i = 0; i < 12; ++i) {
        double noise = 1 + 0.002 * ((i * 7) % 5 - 2);
        values.push_back(1000 * noise * (name == "BM_B" ? slowdown : 1.0));
      }
      results.push_back({{"suite", "gbench"},
                         {"benchmark", name},
                         {"metric", "real_time"},
                         {"unit", "ns"},
                         {"direction", "lower"},
                         {"values", values}});
    }
    u["results"] = results;
    return u.dump();
  };
  const std::string base = "aaaaaaaa-1111-4222-8333-444455556666";
  const std::string contender = "bbbbbbbb-1111-4222-8333-444455556666";
  ASSERT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_, upload(base, 1.0)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_, upload(contender, 1.2)).status,
            201);
  auto response =
      Call("GET", "/api/v1/projects/alpha/compare?base=" + base + "&contender=" + contender,
           alpha_read_);
  ASSERT_EQ(response.status, 200) << response.body;
  json body = Body(response);
  for (const char* key :
       {"metric", "unit", "direction", "threshold", "alpha", "test", "confidence", "algorithm",
        "benchmarks", "suite", "counts", "only_in_base", "only_in_contender", "warnings"}) {
    EXPECT_TRUE(body.contains(key)) << key;
  }
  EXPECT_EQ(body["metric"], "real_time");
  EXPECT_EQ(body["unit"], "ns");
  EXPECT_DOUBLE_EQ(body["threshold"].get<double>(), 0.05);
  EXPECT_EQ(body["counts"]["regression"], 1);
  ASSERT_EQ(body["benchmarks"].size(), 3u);
  for (const auto& b : body["benchmarks"]) {
    for (const char* key : {"name", "base", "contender", "change", "change_ci", "p_welch",
                            "p_welch_log", "p_utest", "p_adjusted", "verdict", "reason"}) {
      EXPECT_TRUE(b.contains(key)) << key;
    }
    EXPECT_EQ(b["verdict"], b["name"] == "BM_B" ? "REGRESSION" : "EQUIVALENT") << b.dump();
  }
  EXPECT_NEAR(body["benchmarks"][1]["change"].get<double>(), 0.2, 1e-9);

  // A 25% threshold lets the 20% slowdown pass.
  auto lenient = Call("GET",
                      "/api/v1/projects/alpha/compare?base=" + base + "&contender=" + contender +
                          "&threshold=25%25&alpha=0.01",
                      alpha_read_);
  ASSERT_EQ(lenient.status, 200) << lenient.body;
  EXPECT_EQ(Body(lenient)["counts"]["regression"], 0);
  EXPECT_DOUBLE_EQ(Body(lenient)["threshold"].get<double>(), 0.25);

  auto missing = Call("GET",
                      "/api/v1/projects/alpha/compare?base=" + base +
                          "&contender=00000000-0000-0000-0000-000000000000",
                      alpha_read_);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Field(missing), "contender");
  auto no_metric = Call("GET",
                        "/api/v1/projects/alpha/compare?base=" + base + "&contender=" + contender +
                            "&metric=cpu_time",
                        alpha_read_);
  EXPECT_EQ(no_metric.status, 400);
  EXPECT_EQ(Field(no_metric), "metric");
}

// --- operations -----------------------------------------------------------------------------

TEST_F(ApiTest, HealthReadinessMetricsAndOpenApi) {
  auto health = Call("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(Body(health), json({{"status", "ok"}}));
  auto ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(Body(ready), json({{"status", "ready"}}));
  db_up_ = false;
  auto not_ready = Call("GET", "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(Body(not_ready)["error"]["code"], "UNAVAILABLE");
  EXPECT_TRUE(not_ready.headers.Get("Retry-After").has_value());

  metrics_.ObserveRequest("healthz", 200, 0.001);
  auto metrics = Call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type.rfind("text/plain", 0), 0u);
  EXPECT_NE(metrics.body.find("perfgate_http_requests_total{route=\"healthz\",status=\"200\"} 1"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("perfgate_ingested_samples_total"), std::string::npos);

  auto openapi = Call("GET", "/api/v1/openapi.yaml");
  EXPECT_EQ(openapi.status, 200);
  EXPECT_EQ(openapi.body.rfind("openapi: 3.0", 0), 0u) << openapi.body.substr(0, 80);
  EXPECT_NE(openapi.body.find("/api/v1/projects/{project}/runs"), std::string::npos);
}

}  // namespace
}  // namespace perfgate::server::api
