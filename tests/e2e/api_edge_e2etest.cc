// SPDX-License-Identifier: Apache-2.0
// API v1 end to end on what the edge refuses and what error bodies never say: NUL and invalid
// UTF-8 in path and query parameters are a 400 naming the parameter before any route or the
// database sees them (nothing stored), and the database's own text (SQL, hosts, ports, DETAIL and
// CONTEXT lines) stays in the server's log under the request id that the body names.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

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

// A string member of the error object ("" when absent or not a string).
std::string ErrorText(const HttpResponse& response, const char* name) {
  const json body = response.Json();
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return "";
  const json& member = body["error"].value(name, json());
  return member.is_string() ? member.get<std::string>() : "";
}

// What no error body may carry: PostgreSQL's wording and the database's address.
void ExpectNoDatabaseText(const HttpResponse& response, const std::string& database_port) {
  for (const char* word : {"UTF8", "CONTEXT", "DETAIL", "portal", "SELECT", "INSERT", "127.0.0.1",
                           "localhost", "port", "host"}) {
    EXPECT_EQ(response.body.find(word), std::string::npos)
        << "\"" << word << "\" in " << Describe(response);
  }
  if (!database_port.empty()) {
    EXPECT_EQ(response.body.find(database_port), std::string::npos) << Describe(response);
  }
}

// The port in a DSN ("port=5432" or "postgresql://host:5432/db"); "" when it names none.
std::string PortOf(const std::string& dsn) {
  std::smatch match;
  if (std::regex_search(dsn, match, std::regex(R"(port=(\d+))"))) return match[1];
  if (std::regex_search(dsn, match, std::regex(R"(:(\d+)/)"))) return match[1];
  return "";
}

TEST_F(ApiE2eTest, NulInPathOrQueryIs400NamingItAndStoresNothing) {
  CreateProject("p1");
  const std::string token = CreateToken("p1", {"ingest", "read"});
  ASSERT_EQ(
      PostRun("p1", Upload(RunId(1), "p1", "main", Sha(1), {{"BM", {1, 2}}}).dump(), token).status,
      201);

  HttpResponse list = http().Get("/api/v1/projects/p1%00/runs", token);
  EXPECT_EQ(list.status, 400) << Describe(list);
  EXPECT_EQ(list.ErrorCode(), "INVALID_ARGUMENT");
  EXPECT_EQ(ErrorText(list, "message"), "path parameter project: contains NUL");

  HttpResponse post =
      http().Post("/api/v1/projects/p1%00/runs",
                  Upload(RunId(2), "p1", "main", Sha(2), {{"BM", {3}}}).dump(), token);
  EXPECT_EQ(post.status, 400) << Describe(post);
  EXPECT_EQ(ErrorText(post, "message"), "path parameter project: contains NUL");

  HttpResponse branch = http().Get("/api/v1/projects/p1/runs?branch=main%00", token);
  EXPECT_EQ(branch.status, 400) << Describe(branch);
  EXPECT_EQ(ErrorText(branch, "message"), "query parameter branch: contains NUL");
  EXPECT_EQ(ErrorText(branch, "field"), "branch");

  EXPECT_EQ(RunCount("p1"), 1u);
}

TEST_F(ApiE2eTest, NulInAVerdictRuleIsRefusedAtValidationNamingTheRule) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  ASSERT_EQ(
      PostRun("p", Upload(RunId(1), "p", "main", Sha(1), {{"BM", {1, 2}}}).dump(), token).status,
      201);
  const json body = {{"rules", json::array({{{"benchmark", "BM_*"}, {"percent", 5}},
                                            {{"benchmark", std::string("BM_\0*", 5)}}})}};
  HttpResponse verdict =
      http().Post("/api/v1/projects/p/runs/" + RunId(1) + "/verdict", body.dump(), token);
  EXPECT_EQ(verdict.status, 400) << Describe(verdict);
  EXPECT_EQ(verdict.ErrorField(), "rules[1].benchmark");
  ExpectNoDatabaseText(verdict, PortOf(dsn_));
}

TEST_F(ApiE2eTest, InvalidUtf8InPathOrFiltersIs400WithoutDatabaseText) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  const std::string port = PortOf(dsn_);
  struct Case {
    std::string target;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/api/v1/projects/%ff/runs", "path parameter project: not valid UTF-8"},
      {"/api/v1/projects/p/runs?branch=%ff", "query parameter branch: not valid UTF-8"},
      {"/api/v1/projects/p/runs?testbed=%ff", "query parameter testbed: not valid UTF-8"},
      {"/api/v1/projects/p/series?benchmark=%ff&metric=real_time",
       "query parameter benchmark: not valid UTF-8"},
      {"/api/v1/projects/p/alerts?branch=%C0%80", "query parameter branch: not valid UTF-8"},
      {"/api/v1/projects/p/alerts?benchmark=%ff", "query parameter benchmark: not valid UTF-8"},
  };
  for (const Case& c : cases) {
    for (const std::string& authorization : {std::string(), token}) {
      HttpResponse response = http().Get(c.target, authorization);
      EXPECT_EQ(response.status, 400) << c.target << ": " << Describe(response);
      EXPECT_EQ(ErrorText(response, "message"), c.message) << c.target;
      ExpectNoDatabaseText(response, port);
      EXPECT_EQ(response.headers.count("x-request-id"), 1u) << c.target;
    }
  }
}

TEST_F(ApiE2eTest, DatabaseOutageNamesTheRequestIdAndLogsTheDetail) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  const std::string port = PortOf(dsn_);
  auto log = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
  spdlog::default_logger()->sinks().push_back(log);
  struct RemoveSink {
    std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink;
    ~RemoveSink() { std::erase(spdlog::default_logger()->sinks(), sink); }
  } remove_sink{log};

  ASSERT_TRUE(cluster_->Stop().has_value());
  HttpResponse runs = http().Get("/api/v1/projects/p/runs", token);
  HttpResponse ready = http().Get("/readyz");
  ASSERT_TRUE(cluster_->Start().has_value());

  EXPECT_EQ(runs.status, 503) << Describe(runs);
  EXPECT_EQ(ErrorText(runs, "message"), "the database is unavailable");
  const std::string id = ErrorText(runs, "request_id");
  ASSERT_EQ(id.size(), 16u) << Describe(runs);
  EXPECT_EQ(runs.headers["x-request-id"], id);
  ExpectNoDatabaseText(runs, port);

  EXPECT_EQ(ready.status, 503) << Describe(ready);
  EXPECT_EQ(ErrorText(ready, "request_id").size(), 16u) << Describe(ready);
  ExpectNoDatabaseText(ready, port);

  // The log has the database's own text under the id the client was given.
  bool logged = false;
  for (const std::string& line : log->last_formatted()) {
    if (line.find(id) != std::string::npos && line.find("connect") != std::string::npos) {
      logged = true;
    }
  }
  EXPECT_TRUE(logged) << "no log line names request " << id;
}

}  // namespace
}  // namespace perfwarden
