// SPDX-License-Identifier: Apache-2.0
// Fixture of the API v1 route tests (tests/unit/server/api): in-memory fakes of the four store
// interfaces, the routes registered over them with tokens of every kind (admin, a project's
// ingest/read, revoked), a request helper through router.Handle(), and a valid run upload.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/api/api.h"
#include "server/auth/tokens.h"

namespace perfwarden::server::api::api_testing {

using nlohmann::json;

class FakeProjects : public store::ProjectStore {
 public:
  Result<store::Project> CreateProject(
      const std::string& name, bool public_read,
      const std::optional<std::vector<std::string>>& protected_branches) override {
    for (const auto& p : projects) {
      if (p.name == name) return MakeError(ErrorCode::kConflict, "project exists");
    }
    projects.push_back({static_cast<int64_t>(projects.size()) + 1, name, public_read,
                        "2024-05-01T10:00:00Z", protected_branches});
    return projects.back();
  }
  Result<store::Project> UpdateProject(const std::string& name,
                                       const store::ProjectUpdate& update) override {
    for (auto& p : projects) {
      if (p.name != name) continue;
      if (update.public_read) p.public_read = *update.public_read;
      if (update.protected_branches) p.protected_branches = *update.protected_branches;
      return p;
    }
    return MakeError(ErrorCode::kNotFound, "no such project");
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

inline constexpr char kRunId[] = "6f1c0c4e-1111-4222-8333-444455556666";

inline json ValidUpload() {
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

}  // namespace perfwarden::server::api::api_testing
