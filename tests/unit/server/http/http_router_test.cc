// SPDX-License-Identifier: Apache-2.0
// The HTTP layer without a socket: target parsing, routing (params, precedence, 404/405), the
// ErrorCode -> status map and error body, and the Prometheus rendering.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "server/http/errors.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/http/types.h"
#include "wire/error.h"

namespace perfwarden::http {
namespace {

Request MakeRequest(std::string method, std::string_view target) {
  Request request;
  request.method = std::move(method);
  auto parsed = ParseTarget(target, request);
  EXPECT_TRUE(parsed.has_value()) << target;
  return request;
}

nlohmann::json ErrorBody(const Response& response) {
  return nlohmann::json::parse(response.body).at("error");
}

Handler Echo(std::string tag) {
  return [tag](const Request& request, const PathParams& params) {
    nlohmann::json body = {{"tag", tag}, {"params", params}};
    if (auto q = request.Query("q")) body["q"] = *q;
    return Response::Json(200, body.dump());
  };
}

TEST(HttpTypesTest, ParseTargetDecodesQueryButKeepsPathEncoded) {
  Request request = MakeRequest("GET", "/a/b%20c?x=1&y=hello+world&z=%2F%26&x=2&flag");
  EXPECT_EQ(request.path, "/a/b%20c");
  EXPECT_EQ(request.Query("y"), "hello world");
  EXPECT_EQ(request.Query("z"), "/&");
  EXPECT_EQ(request.Query("flag"), "");
  EXPECT_EQ(request.QueryAll("x"), (std::vector<std::string>{"1", "2"}));
  EXPECT_FALSE(request.Query("missing").has_value());
}

TEST(HttpTypesTest, ParseTargetRejectsBadTargets) {
  for (std::string_view target : {"", "relative", "http://host/x", "/a%2", "/a%zz", "/a?x=%G1"}) {
    Request request;
    auto parsed = ParseTarget(target, request);
    ASSERT_FALSE(parsed.has_value()) << target;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(HttpTypesTest, HeadersAreCaseInsensitive) {
  Headers headers;
  headers.Add("Content-Type", "application/json");
  headers.Add("X-Thing", "1");
  EXPECT_EQ(headers.Get("content-type"), "application/json");
  EXPECT_EQ(headers.Get("CONTENT-TYPE"), "application/json");
  headers.Set("x-thing", "2");
  EXPECT_EQ(headers.Get("X-Thing"), "2");
  EXPECT_EQ(headers.fields().size(), 2u);
  EXPECT_FALSE(headers.Contains("Authorization"));
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/api/v1/projects/{project}/runs/{id}", "get_run", Echo("get_run"));
    router_.Add("POST", "/api/v1/projects/{project}/runs", "post_run", Echo("post_run"));
    router_.Add("GET", "/api/v1/projects/{project}/runs", "list_runs", Echo("list_runs"));
    router_.Add("GET", "/api/v1/projects/{project}/runs/latest", "latest_run", Echo("latest"));
    router_.Add("GET", "/healthz", "healthz", Echo("healthz"));
    router_.Add("GET", "/boom", "boom", [](const Request&, const PathParams&) -> Response {
      throw std::runtime_error("secret detail");
    });
  }
  Router router_;
};

TEST_F(RouterTest, MatchesAndDecodesNamedParams) {
  Router::Routed routed =
      router_.Route(MakeRequest("GET", "/api/v1/projects/my%20proj/runs/6f1c?q=x"));
  EXPECT_EQ(routed.route, "get_run");
  ASSERT_EQ(routed.response.status, 200);
  auto body = nlohmann::json::parse(routed.response.body);
  EXPECT_EQ(body["tag"], "get_run");
  EXPECT_EQ(body["params"]["project"], "my proj");
  EXPECT_EQ(body["params"]["id"], "6f1c");
  EXPECT_EQ(body["q"], "x");
}

TEST_F(RouterTest, EncodedSlashStaysInsideOneParam) {
  auto body = nlohmann::json::parse(
      router_.Handle(MakeRequest("GET", "/api/v1/projects/a%2Fb/runs/1")).body);
  EXPECT_EQ(body["params"]["project"], "a/b");
}

TEST_F(RouterTest, LiteralSegmentBeatsParamWhateverTheOrder) {
  EXPECT_EQ(router_.Route(MakeRequest("GET", "/api/v1/projects/p/runs/latest")).route,
            "latest_run");
  EXPECT_EQ(router_.Route(MakeRequest("GET", "/api/v1/projects/p/runs/other")).route, "get_run");
}

TEST_F(RouterTest, SamePathDifferentMethods) {
  EXPECT_EQ(router_.Route(MakeRequest("POST", "/api/v1/projects/p/runs")).route, "post_run");
  EXPECT_EQ(router_.Route(MakeRequest("GET", "/api/v1/projects/p/runs")).route, "list_runs");
}

TEST_F(RouterTest, UnknownPathIs404) {
  for (std::string_view target :
       {"/nope", "/api/v1/projects/p/runs/1/extra", "/healthz/", "/api/v1/projects//runs/1", "/"}) {
    Router::Routed routed = router_.Route(MakeRequest("GET", target));
    EXPECT_EQ(routed.response.status, 404) << target;
    EXPECT_EQ(routed.route, Router::kUnmatchedRoute);
    EXPECT_EQ(ErrorBody(routed.response)["code"], "NOT_FOUND");
    EXPECT_EQ(routed.response.content_type, "application/json");
  }
}

TEST_F(RouterTest, KnownPathOtherMethodIs405WithAllow) {
  Router::Routed routed = router_.Route(MakeRequest("DELETE", "/api/v1/projects/p/runs"));
  EXPECT_EQ(routed.response.status, 405);
  EXPECT_EQ(routed.response.headers.Get("Allow"), "GET, POST");
  EXPECT_EQ(ErrorBody(routed.response)["code"], "METHOD_NOT_ALLOWED");
  EXPECT_EQ(router_.Route(MakeRequest("POST", "/healthz")).response.headers.Get("allow"), "GET");
}

TEST_F(RouterTest, ThrowingHandlerIs500WithoutDetails) {
  Router::Routed routed = router_.Route(MakeRequest("GET", "/boom"));
  EXPECT_EQ(routed.route, "boom");
  EXPECT_EQ(routed.response.status, 500);
  EXPECT_EQ(ErrorBody(routed.response)["code"], "INTERNAL");
  EXPECT_EQ(routed.response.body.find("secret"), std::string::npos);
}

TEST_F(RouterTest, NulAndInvalidUtf8InParamsAre400NamingTheParam) {
  struct Case {
    const char* target;
    const char* message;
    const char* field;
  };
  const Case cases[] = {
      {"/api/v1/projects/p1%00/runs", "path parameter project: contains NUL", "project"},
      {"/api/v1/projects/%ff/runs", "path parameter project: not valid UTF-8", "project"},
      {"/api/v1/projects/p/runs/%C0%AF", "path parameter id: not valid UTF-8", "id"},
      {"/api/v1/projects/p/runs/%ED%A0%80", "path parameter id: not valid UTF-8", "id"},
      {"/api/v1/projects/p/runs?branch=main%00", "query parameter branch: contains NUL", "branch"},
      {"/api/v1/projects/p/runs?testbed=%ff", "query parameter testbed: not valid UTF-8",
       "testbed"},
      {"/api/v1/projects/p/runs?x%00=1", "a query parameter's name: contains NUL", ""},
  };
  for (const Case& c : cases) {
    Router::Routed routed = router_.Route(MakeRequest("GET", c.target));
    EXPECT_EQ(routed.response.status, 400) << c.target;
    EXPECT_NE(routed.route, Router::kUnmatchedRoute) << c.target;
    auto error = ErrorBody(routed.response);
    EXPECT_EQ(error["code"], "INVALID_ARGUMENT") << c.target;
    EXPECT_EQ(error["message"], c.message) << c.target;
    EXPECT_EQ(error["field"], c.field[0] == '\0' ? nlohmann::json() : nlohmann::json(c.field))
        << c.target;
  }
  // UTF-8 beyond ASCII is fine.
  auto body = nlohmann::json::parse(
      router_.Handle(MakeRequest("GET", "/api/v1/projects/caf%C3%A9/runs/1?q=%E2%82%AC")).body);
  EXPECT_EQ(body["params"]["project"], "caf\u00e9");
  EXPECT_EQ(body["q"], "\u20ac");
}

TEST_F(RouterTest, EveryAnswerNamesItsRequestAndErrorBodiesNameItToo) {
  Request given = MakeRequest("GET", "/nope");
  given.id = "00000000000000aa";
  Router::Routed missing = router_.Route(given);
  EXPECT_EQ(missing.response.headers.Get("X-Request-Id"), "00000000000000aa");
  EXPECT_EQ(ErrorBody(missing.response)["request_id"], "00000000000000aa");

  Router::Routed ok = router_.Route(MakeRequest("GET", "/healthz"));
  auto made = ok.response.headers.Get("X-Request-Id");
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->size(), 16u);
  EXPECT_NE(router_.Route(MakeRequest("GET", "/healthz")).response.headers.Get("X-Request-Id"),
            made);
  // Outside a request an error body names none.
  EXPECT_FALSE(nlohmann::json::parse(BadRequest("x").body)["error"].contains("request_id"));
}

TEST(HttpErrorsTest, OneMapFromErrorCodeToStatus) {
  struct Case {
    ErrorCode code;
    int status;
    const char* name;
  };
  for (const Case& c :
       {Case{ErrorCode::kInvalidArgument, 400, "INVALID_ARGUMENT"},
        Case{ErrorCode::kUnauthenticated, 401, "UNAUTHENTICATED"},
        Case{ErrorCode::kPermissionDenied, 403, "PERMISSION_DENIED"},
        Case{ErrorCode::kNotFound, 404, "NOT_FOUND"}, Case{ErrorCode::kConflict, 409, "CONFLICT"},
        Case{ErrorCode::kInternal, 500, "INTERNAL"},
        Case{ErrorCode::kUnavailable, 503, "UNAVAILABLE"}}) {
    EXPECT_EQ(wire::StatusOf(c.code), c.status) << c.name;
    Response response = ErrorResponse(Error{c.code, "msg", ""});
    EXPECT_EQ(response.status, c.status);
    EXPECT_EQ(response.content_type, "application/json");
    EXPECT_EQ(ErrorBody(response)["code"], c.name);
    EXPECT_EQ(response.headers.Contains("WWW-Authenticate"), c.status == 401) << c.name;
  }
}

TEST(HttpErrorsTest, BodyShapeWithAndWithoutField) {
  Response with_field =
      ErrorResponse(Error{ErrorCode::kInvalidArgument, "must be positive", "results[0].values[2]"});
  EXPECT_EQ(nlohmann::json::parse(with_field.body),
            nlohmann::json::parse(R"({"error":{"code":"INVALID_ARGUMENT",
                "message":"must be positive","field":"results[0].values[2]"}})"));
  Response without_field = ErrorResponse(Error{ErrorCode::kNotFound, "no such run", ""});
  EXPECT_TRUE(ErrorBody(without_field)["field"].is_null());
  Response unauthenticated = ErrorResponse(Error{ErrorCode::kUnauthenticated, "no token", ""});
  EXPECT_EQ(unauthenticated.headers.Get("WWW-Authenticate"), "Bearer");
}

TEST(HttpErrorsTest, InvalidUtf8InMessageStillGivesValidJson) {
  Response response = ErrorResponse(Error{ErrorCode::kInvalidArgument, "bad \xff\xfe name", "n"});
  EXPECT_NO_THROW(nlohmann::json::parse(response.body));
}

TEST(HttpErrorsTest, ProtocolErrors) {
  EXPECT_EQ(PayloadTooLarge(10).status, 413);
  EXPECT_EQ(ErrorBody(PayloadTooLarge(10))["code"], "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(HeaderFieldsTooLarge(10).status, 431);
  EXPECT_EQ(ErrorBody(HeaderFieldsTooLarge(10))["code"], "HEADER_FIELDS_TOO_LARGE");
  EXPECT_EQ(RequestTimeout().status, 408);
  EXPECT_EQ(BadRequest("x").status, 400);
  EXPECT_EQ(ErrorBody(BadRequest("x"))["code"], "INVALID_ARGUMENT");
}

TEST(HttpMetricsTest, RendersCountersHistogramsAndGauges) {
  Metrics metrics;
  metrics.ObserveRequest("get_run", 200, 0.00390625);
  metrics.ObserveRequest("get_run", 200, 0.125);
  metrics.ObserveRequest("get_run", 404, 20.0);
  metrics.ObserveRequest("weird\"route\\", 500, 0.001);
  Counter* samples = metrics.AddCounter("perfwarden_ingested_samples_total", "Samples stored.");
  samples->Increment(41);
  metrics.AddCounter("perfwarden_ingested_samples_total", "again")->Increment();
  metrics.AddGauge("perfwarden_db_pool_connections", "Pool connections by state.", [] {
    return std::vector<GaugeSample>{{{{"state", "idle"}}, 3}, {{{"state", "busy"}}, 1}};
  });
  metrics.AddGauge("perfwarden_up", "Always 1.", [] { return 1.0; });

  std::string text = metrics.Render();
  auto has = [&](std::string_view line) {
    return text.find(std::string(line) + "\n") != std::string::npos;
  };
  EXPECT_TRUE(has("# TYPE perfwarden_http_requests_total counter"));
  EXPECT_TRUE(has(R"(perfwarden_http_requests_total{route="get_run",status="200"} 2)"));
  EXPECT_TRUE(has(R"(perfwarden_http_requests_total{route="get_run",status="404"} 1)"));
  EXPECT_TRUE(has(R"(perfwarden_http_requests_total{route="weird\"route\\",status="500"} 1)"));
  EXPECT_TRUE(has("# TYPE perfwarden_http_request_duration_seconds histogram"));
  // Buckets are cumulative; 2^-8 falls in le=0.005, 1/8 in le=0.25, 20 s only in +Inf.
  EXPECT_TRUE(
      has(R"(perfwarden_http_request_duration_seconds_bucket{route="get_run",le="0.0025"} 0)"));
  EXPECT_TRUE(
      has(R"(perfwarden_http_request_duration_seconds_bucket{route="get_run",le="0.005"} 1)"));
  EXPECT_TRUE(
      has(R"(perfwarden_http_request_duration_seconds_bucket{route="get_run",le="0.25"} 2)"));
  EXPECT_TRUE(has(R"(perfwarden_http_request_duration_seconds_bucket{route="get_run",le="10"} 2)"));
  EXPECT_TRUE(
      has(R"(perfwarden_http_request_duration_seconds_bucket{route="get_run",le="+Inf"} 3)"));
  EXPECT_TRUE(has(R"(perfwarden_http_request_duration_seconds_sum{route="get_run"} 20.12890625)"));
  EXPECT_TRUE(has(R"(perfwarden_http_request_duration_seconds_count{route="get_run"} 3)"));
  EXPECT_TRUE(has("# TYPE perfwarden_ingested_samples_total counter"));
  EXPECT_TRUE(has("perfwarden_ingested_samples_total 42"));
  EXPECT_TRUE(has("# TYPE perfwarden_db_pool_connections gauge"));
  EXPECT_TRUE(has(R"(perfwarden_db_pool_connections{state="idle"} 3)"));
  EXPECT_TRUE(has(R"(perfwarden_db_pool_connections{state="busy"} 1)"));
  EXPECT_TRUE(has("perfwarden_up 1"));
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace perfwarden::http
