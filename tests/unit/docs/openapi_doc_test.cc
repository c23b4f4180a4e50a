// SPDX-License-Identifier: Apache-2.0
// docs/openapi.yaml against the code it describes: the served copy is the file and valid
// OpenAPI 3.0 whose $refs resolve, every path parameter is declared, the documented operations
// are exactly the ones the router serves on those paths, and the verdict schemas name every key
// the verdict endpoints write and accept (so a new field fails here until it is documented). The
// alert schemas are openapi_alert_test.cc's.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/api/api.h"
#include "server/api/routes.h"
#include "server/auth/tokens.h"
#include "server/gate/verdict.h"
#include "tests/testing/openapi_schema.h"
#include "tests/testing/planted_paired.h"
#include "wire/paired.h"
#include "wire/verdict.h"
#include "wire/verdict_request.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

constexpr char kRun[] = "00000000-0000-4000-8000-000000000010";
constexpr char kBaseRun[] = "00000000-0000-4000-8000-000000000001";

TEST_F(OpenApiDocTest, TheServedDocumentIsTheFileAndValidOpenApi30) {
  const std::string file = ReadFile(PERFWARDEN_FIXTURES_DIR "/../../docs/openapi.yaml");
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(std::string(OpenApiYaml()), file) << "the embedded copy is stale";
  ASSERT_TRUE(parse_error_.empty()) << parse_error_;
  ASSERT_TRUE(root_.IsMap());
  EXPECT_EQ(root_["openapi"].as<std::string>().rfind("3.0.", 0), 0u);
  ASSERT_TRUE(root_["paths"].IsMap());
  std::vector<std::string> refs;
  CollectRefs(root_, &refs);
  EXPECT_GT(refs.size(), 50u);
  for (const std::string& ref : refs) {
    EXPECT_TRUE(Resolve(root_, ref).IsDefined()) << "unresolved $ref " << ref;
  }
}

TEST_F(OpenApiDocTest, EveryPathParameterIsDeclaredAndRequired) {
  for (const auto& path : root_["paths"]) {
    const std::string pattern = path.first.as<std::string>();
    Keys in_pattern;
    for (size_t open = pattern.find('{'); open != std::string::npos;
         open = pattern.find('{', open + 1)) {
      in_pattern.insert(pattern.substr(open + 1, pattern.find('}', open) - open - 1));
    }
    ASSERT_TRUE(path.second.IsMap()) << pattern;
    for (const auto& operation : path.second) {
      const std::string method = operation.first.as<std::string>();
      if (method == "parameters") continue;
      Keys declared;
      for (const YAML::Node& list : {path.second["parameters"], operation.second["parameters"]}) {
        if (!list.IsDefined() || !list.IsSequence()) continue;
        for (const auto& item : list) {
          const YAML::Node parameter = item["$ref"].IsDefined()
                                           ? Resolve(root_, item["$ref"].as<std::string>())
                                           : static_cast<const YAML::Node&>(item);
          if (parameter["in"].as<std::string>() != "path") continue;
          declared.insert(parameter["name"].as<std::string>());
          EXPECT_TRUE(parameter["required"].as<bool>(false)) << method << " " << pattern;
        }
      }
      EXPECT_EQ(declared, in_pattern) << method << " " << pattern;
      EXPECT_TRUE(operation.second["responses"].IsMap()) << method << " " << pattern;
    }
  }
}

// --- fakes: enough of the stores for the router and the verdict use case ---------------------

class OneProject : public store::ProjectStore {
 public:
  Result<store::Project> CreateProject(const std::string&, bool,
                                       const std::optional<std::vector<std::string>>&) override {
    return MakeError(ErrorCode::kConflict, "not in this fake");
  }
  Result<store::Project> UpdateProject(const std::string&, const store::ProjectUpdate&) override {
    return MakeError(ErrorCode::kNotFound, "not in this fake");
  }
  Result<std::vector<store::Project>> ListProjects() override { return std::vector{project}; }
  Result<store::Project> GetProject(const std::string& name) override {
    if (name == project.name) return project;
    return MakeError(ErrorCode::kNotFound, "no such project");
  }
  store::Project project{1, "proj", false, "2024-05-01T10:00:00Z"};
};

class OneToken : public store::TokenStore {
 public:
  OneToken() : token(*auth::GenerateToken()) {}
  Result<store::TokenRecord> CreateToken(const store::NewToken&) override {
    return MakeError(ErrorCode::kInternal, "not in this fake");
  }
  Result<store::TokenRecord> FindTokenByHash(const std::string& hash) override {
    if (hash != *auth::HashToken(token)) return MakeError(ErrorCode::kNotFound, "no token");
    return store::TokenRecord{
        1, 1, "proj", "ci", token.substr(0, 12), {"ingest", "read"}, "2024-05-01T10:00:00Z", false};
  }
  Result<std::vector<store::TokenRecord>> ListTokens(std::optional<int64_t>) override {
    return std::vector<store::TokenRecord>{};
  }
  Result<bool> RevokeToken(int64_t) override { return false; }
  Result<bool> HasAdminToken() override { return true; }
  std::string token;
};

store::SampleSet Set(const std::string& benchmark, double center) {
  store::SampleSet set{{"s", benchmark, "real_time"}, "ns", Direction::kLowerIsBetter, {}};
  for (int i = 0; i < 12; ++i) set.values.push_back(center * (1 + 0.001 * ((i * 5) % 7 - 3)));
  return set;
}

// Run kRun (BM_A 10% slower, BM_B unchanged, BM_C new, BM_D ignored by the request's rule)
// against kBaseRun at its merge-base.
class TwoRuns : public store::VerdictStore {
 public:
  Result<store::RunContext> GetRunContext(const store::Project&, const std::string& id) override {
    if (id != kRun) return MakeError(ErrorCode::kNotFound, "no run " + id, "id");
    store::RunContext context;
    context.summary = {kRun, "proj", "feature", std::string(40, 'b'), "bed", 1, 7, "", "",
                       "",   48,     ""};
    context.target_branch = "main";
    context.merge_base = std::string(40, 'a');
    context.ancestry = {context.merge_base};
    return context;
  }
  Result<std::optional<store::BaselineChoice>> FindBaseline(const store::Project&,
                                                            const store::RunContext& run,
                                                            std::string*) override {
    return std::optional<store::BaselineChoice>(
        store::BaselineChoice{run.merge_base, "main", "bed", "merge_base", 0, {kBaseRun}});
  }
  Result<std::vector<store::SampleSet>> GetSampleSets(
      const store::Project&, const std::vector<std::string>& ids) override {
    if (ids == std::vector<std::string>{kBaseRun}) {
      return std::vector{Set("BM_A", 1000), Set("BM_B", 2000), Set("BM_D", 4000)};
    }
    return std::vector{Set("BM_A", 1100), Set("BM_B", 2000), Set("BM_C", 3000), Set("BM_D", 9000)};
  }
  Result<store::StoredVerdict> SaveVerdict(const store::Project&,
                                           const store::NewVerdict& verdict) override {
    saved.push_back({static_cast<int64_t>(saved.size()) + 1, "2024-05-01T10:00:00Z", verdict});
    return saved.back();
  }
  Result<std::optional<store::StoredVerdict>> LatestVerdict(const store::Project&,
                                                            const std::string&) override {
    if (saved.empty()) return std::optional<store::StoredVerdict>();
    return std::optional<store::StoredVerdict>(saved.back());
  }
  Result<std::optional<store::StoredVerdict>> GetVerdict(const store::Project&,
                                                         const std::string& run_id,
                                                         int64_t id) override {
    for (const store::StoredVerdict& v : saved) {
      if (v.id == id && v.verdict.run_id == run_id) return std::optional<store::StoredVerdict>(v);
    }
    return std::optional<store::StoredVerdict>();
  }
  std::vector<store::StoredVerdict> saved;
};

// No history stored: every alert route answers 404, which is enough to see it routed.
class NoHistory : public store::HistoryStore {
 public:
  Result<std::unique_ptr<store::HistoryRunTransaction>> BeginNextRun(
      const std::vector<std::string>&) override {
    return std::unique_ptr<store::HistoryRunTransaction>();
  }
  Result<int64_t> PendingHistoryRuns() override { return 0; }
  Result<std::optional<std::string>> SkipNextRun(const std::vector<std::string>&,
                                                 const std::string&) override {
    return std::nullopt;
  }
  Result<store::AlertPage> ListAlerts(const store::Project&, const store::AlertFilter&) override {
    return store::AlertPage{};
  }
  Result<std::vector<store::AlertCount>> CountAlerts(const store::Project&,
                                                     const store::AlertFilter&) override {
    return std::vector<store::AlertCount>{{"regression", "code", "open", 2}};
  }
  Result<store::AlertDetail> GetAlert(const store::Project&, int64_t, int) override {
    return MakeError(ErrorCode::kNotFound, "no alert", "id");
  }
  Result<store::AlertRecord> UpdateAlert(const store::Project&, int64_t,
                                         const store::AlertUpdate&) override {
    return MakeError(ErrorCode::kNotFound, "no alert", "id");
  }
  Result<store::AlertGroupPage> ListAlertGroups(const store::Project&,
                                                const store::AlertGroupFilter&) override {
    return store::AlertGroupPage{};
  }
  Result<store::AlertGroupDetail> GetAlertGroup(const store::Project&, int64_t) override {
    return MakeError(ErrorCode::kNotFound, "no alert group", "id");
  }
  Result<store::AlertGroupDetail> UpdateAlertGroup(const store::Project&, int64_t,
                                                   const store::AlertUpdate&) override {
    return MakeError(ErrorCode::kNotFound, "no alert group", "id");
  }
  Result<store::BisectRecord> SaveBisect(const store::Project&, const store::NewBisect&) override {
    return MakeError(ErrorCode::kNotFound, "no alert", "alert_id");
  }
  Result<store::BisectRecord> GetBisect(const store::Project&, int64_t) override {
    return MakeError(ErrorCode::kNotFound, "no bisect", "id");
  }
  Result<store::HistorySeriesPoints> GetHistorySeries(const store::Project&,
                                                      const store::HistorySeriesQuery&) override {
    return MakeError(ErrorCode::kNotFound, "no series", "benchmark");
  }
};

class OpenApiRoutesTest : public OpenApiDocTest {
 protected:
  void SetUp() override {
    OpenApiDocTest::SetUp();
    deps_.projects = &projects_;
    deps_.tokens = &tokens_;
    deps_.verdicts = &verdicts_;
    deps_.history = &history_;
    deps_.database_ready = [] { return Result<bool>(true); };
    RegisterRoutes(router_, deps_);
  }
  http::Router::Routed Call(const std::string& method, const std::string& target,
                            const std::string& body = "", bool with_token = false) {
    http::Request request;
    request.method = method;
    EXPECT_TRUE(http::ParseTarget(target, request).has_value()) << target;
    if (with_token) request.headers.Set("Authorization", "Bearer " + tokens_.token);
    if (!body.empty()) request.headers.Set("Content-Type", "application/json");
    request.body = body;
    return router_.Route(request);
  }

  OneProject projects_;
  OneToken tokens_;
  TwoRuns store_;
  gate::VerdictService verdicts_{store_};
  NoHistory history_;
  ApiDeps deps_;
  http::Router router_;
};

// A documented path with its parameters filled in: project "proj", any other kRun.
std::string Concrete(std::string target) {
  for (size_t open = target.find('{'); open != std::string::npos; open = target.find('{')) {
    const size_t close = target.find('}', open);
    const bool project = target.substr(open, close - open + 1) == "{project}";
    target.replace(open, close - open + 1, project ? "proj" : kRun);
  }
  return target;
}

TEST_F(OpenApiRoutesTest, DocumentedOperationsAreExactlyTheRoutedOnes) {
  for (const auto& path : root_["paths"]) {
    const std::string target = Concrete(path.first.as<std::string>());
    const Keys documented = KeysOf(path.second);
    const std::map<std::string, std::string> methods = {
        {"get", "GET"}, {"post", "POST"}, {"put", "PUT"}, {"patch", "PATCH"}, {"delete", "DELETE"}};
    for (const auto& [method, upper] : methods) {
      const http::Router::Routed routed = Call(upper, target);
      if (documented.count(method) != 0) {
        EXPECT_NE(routed.route, http::Router::kUnmatchedRoute) << upper << " " << target;
        EXPECT_NE(routed.response.status, 405) << upper << " " << target;
      } else {
        EXPECT_EQ(routed.response.status, 405) << upper << " " << target << " is routed but "
                                               << "not in docs/openapi.yaml";
      }
    }
  }
}

// The server answers heavy routes 429 or 503 when their bounds are full (server/http/
// heavy_queue.h): those and only those document the 429, and the 503 with it.
TEST_F(OpenApiRoutesTest, HeavyOperationsAndOnlyThoseDocumentTheirBounds) {
  int heavy_operations = 0;
  for (const auto& path : root_["paths"]) {
    const std::string target = Concrete(path.first.as<std::string>());
    for (const auto& operation : path.second) {
      std::string method = operation.first.as<std::string>();
      if (method == "parameters") continue;
      std::transform(method.begin(), method.end(), method.begin(), ::toupper);
      http::Request request;
      request.method = method;
      ASSERT_TRUE(http::ParseTarget(target, request).has_value()) << target;
      const bool heavy = router_.CostOf(request).cost == http::Router::Cost::kHeavy;
      heavy_operations += heavy ? 1 : 0;
      const YAML::Node responses = operation.second["responses"];
      EXPECT_EQ(responses["429"].IsDefined(), heavy) << method << " " << path.first;
      if (heavy) {
        EXPECT_TRUE(responses["503"].IsDefined()) << method << " " << path.first;
      }
    }
  }
  EXPECT_EQ(heavy_operations, 7);
}

TEST_F(OpenApiRoutesTest, TheVerdictSchemasNameEveryKeyTheServerWrites) {
  const std::string url = std::string("/api/v1/projects/proj/runs/") + kRun + "/verdict";
  const json request = {{"rules", {{{"benchmark", "BM_D"}, {"ignore", true}}}}};
  const http::Router::Routed posted = Call("POST", url, request.dump(), true);
  ASSERT_EQ(posted.response.status, 201) << posted.response.body;
  const json answer = json::parse(posted.response.body);
  EXPECT_EQ(KeysOf(answer), Keys{"verdict"});
  const json& verdict = answer["verdict"];
  EXPECT_EQ(KeysOf(verdict), Required("Verdict"));
  // The optional keys: written only when the run's metrics moved together (not here), only in
  // paired verdicts, and only when the run's upload named its runner_version (not here).
  Keys verdict_optional = Properties("Verdict");
  for (const std::string& key : Required("Verdict")) verdict_optional.erase(key);
  EXPECT_EQ(verdict_optional, (Keys{"environment_shift", "paired", "runner_version"}));
  EXPECT_EQ(KeysOf(verdict["parameters"]), Properties("VerdictParameters"));
  EXPECT_EQ(KeysOf(verdict["parameters"]), Required("VerdictParameters"));
  for (const json& rule : verdict["parameters"]["rules"]) {
    for (const std::string& key : KeysOf(rule)) {
      EXPECT_EQ(Properties("ThresholdRule").count(key), 1u) << key;
    }
  }
  EXPECT_EQ(KeysOf(verdict["baseline"]), Properties("VerdictBaseline"));
  // Every count but the paired verdicts' "unstable" and "pass".
  EXPECT_EQ(KeysOf(verdict["counts"]), Required("VerdictCounts"));
  Keys counts_optional = Properties("VerdictCounts");
  for (const std::string& key : Required("VerdictCounts")) counts_optional.erase(key);
  EXPECT_EQ(counts_optional, (Keys{"pass", "unstable"}));
  EXPECT_EQ(verdict["outcome"], "regression");

  // Judged, NEW and IGNORED results all carry the documented keys, and only those; the optional
  // ones are what regressions may add (verdict_attribution_test.cc has verdicts with them) and
  // what a paired row adds (ThePairedVerdictNamesEveryKeyTheServerWrites).
  Keys optional = Properties("VerdictResult");
  for (const std::string& key : Required("VerdictResult")) optional.erase(key);
  EXPECT_EQ(optional, (Keys{"attribution", "environment", "paired"}));
  EXPECT_EQ(Required("VerdictAttribution"), Keys{"moved"});
  EXPECT_EQ(Properties("VerdictAttribution"), (Keys{"moved", "roofline", "hint"}));
  std::map<std::string, std::string> kinds;
  for (const json& result : verdict["results"]) {
    kinds[result["benchmark"]] = result["verdict"];
    EXPECT_EQ(KeysOf(result), Required("VerdictResult")) << result.dump();
    EXPECT_EQ(KeysOf(result["current"]), Properties("VerdictSide"));
    if (!result["base"].is_null()) {
      EXPECT_EQ(KeysOf(result["base"]), Properties("VerdictSide"));
    }
  }
  EXPECT_EQ(
      kinds,
      (std::map<std::string, std::string>{
          {"BM_A", "REGRESSION"}, {"BM_B", "EQUIVALENT"}, {"BM_C", "NEW"}, {"BM_D", "IGNORED"}}));

  const http::Router::Routed replayed = Call("GET", url + "?replay=1", "", true);
  ASSERT_EQ(replayed.response.status, 200) << replayed.response.body;
  const json replay = json::parse(replayed.response.body);
  EXPECT_EQ(KeysOf(replay), (Keys{"verdict", "replay"}));
  EXPECT_EQ(KeysOf(replay["replay"]), Properties("VerdictReplay"));
  EXPECT_TRUE(replay["replay"]["matches"].get<bool>()) << replay.dump();
}

// A paired measurement posted to the run: the verdict names the documented keys, "paired" and
// "unstable" included, and each judged row the paired detail's; the same body again is 200.
TEST_F(OpenApiRoutesTest, ThePairedVerdictNamesEveryKeyTheServerWrites) {
  const std::string url = std::string("/api/v1/projects/proj/runs/") + kRun + "/verdict/paired";
  const std::string body =
      wire::EncodePairedMeasurement(testing::PlantedMeasurement(std::string(40, 'a')));
  const http::Router::Routed posted = Call("POST", url, body, true);
  ASSERT_EQ(posted.response.status, 201) << posted.response.body;
  const json verdict = json::parse(posted.response.body)["verdict"];
  Keys expected = Required("Verdict");
  expected.insert("paired");
  EXPECT_EQ(KeysOf(verdict), expected);
  EXPECT_EQ(KeysOf(verdict["paired"]), Properties("PairedSummary"));
  EXPECT_EQ(KeysOf(verdict["counts"]), Properties("VerdictCounts"));
  EXPECT_EQ(KeysOf(verdict["baseline"]), Properties("VerdictBaseline"));
  EXPECT_EQ(KeysOf(verdict["parameters"]), Properties("VerdictParameters"));
  Keys judged = Required("VerdictResult");
  judged.insert("paired");
  std::map<std::string, std::string> kinds;
  for (const json& result : verdict["results"]) {
    kinds[result["benchmark"]] = result["verdict"];
    const bool paired = result.contains("paired");
    EXPECT_EQ(KeysOf(result), paired ? judged : Required("VerdictResult")) << result.dump();
    if (paired) {
      EXPECT_EQ(KeysOf(result["paired"]), Properties("PairedDetail"));
    }
  }
  EXPECT_EQ(kinds, (std::map<std::string, std::string>{{"BM_Slow", "REGRESSION"},
                                                       {"BM_Same", "EQUIVALENT"},
                                                       {"BM_Noisy", "UNSTABLE"},
                                                       {"BM_Few", "NEW"},
                                                       {"BM_Skip", "IGNORED"}}));
  EXPECT_EQ(Call("POST", url, body, true).response.status, 200);
  const json replay = json::parse(
      Call("GET", std::string("/api/v1/projects/proj/runs/") + kRun + "/verdict?replay=1", "", true)
          .response.body);
  EXPECT_TRUE(replay["replay"]["matches"].get<bool>()) << replay.dump();
}

// The verdict as wire/verdict.h types it (what the gate decodes): with every optional part
// present, its encoding names exactly the documented keys of the verdict and of each part.
TEST_F(OpenApiDocTest, TheWireVerdictTypesNameExactlyTheDocumentedKeys) {
  wire::Verdict verdict;
  verdict.baseline = wire::Baseline{};
  verdict.pr = 1;
  verdict.runner_version = "v0.2.0-3-g1a2b3c4";
  ThresholdRule rule;
  rule.percent = 3;
  rule.alpha = 0.01;
  rule.ignore = true;
  rule.gate = false;  // every key of a rule (perfwarden.yaml would not pair it with ignore)
  verdict.parameters.rules = {rule};
  wire::MetricResult result;
  result.threshold = 0.05;
  result.base = result.current = wire::Summary{.n = 3, .median = 1.0, .cv = 0.1};
  result.change = 0.1;
  result.change_ci = wire::Interval{.lower = 0.05, .upper = 0.15};
  result.p_value = result.p_adjusted = 0.01;
  result.attribution = wire::Attribution{
      .moved = {wire::MovedMetric{.metric = "gpu_power", .verdict = "REGRESSION", .change = 0.2}},
      .roofline = wire::Roofline{.bound = "memory-bound", .intensity = 2.0, .ridge = 10.0},
      .hint = "a hint"};
  result.environment = "throttled";
  verdict.results = {result};
  verdict.environment_shift = wire::EnvironmentShift{.metrics = 8,
                                                     .median_change = 0.2,
                                                     .geomean_change = 0.22,
                                                     .same_sign_share = 1,
                                                     .reason = "r"};
  wire::PairedSummary paired;
  paired.baseline_commit = std::string(40, 'a');
  paired.amends = 2;
  paired.geomean_change = 0.1;
  paired.geomean_ci = wire::Interval{.lower = 0.05, .upper = 0.15};
  verdict.paired = paired;
  wire::PairedDetail detail;
  detail.t_ci = wire::Interval{.lower = 0.05, .upper = 0.15};
  detail.bootstrap_ci = wire::Interval{.lower = 0.06, .upper = 0.14};
  verdict.results[0].paired = detail;

  const json encoded = wire::EncodeVerdict(verdict);
  EXPECT_EQ(KeysOf(encoded), Properties("Verdict"));
  EXPECT_EQ(KeysOf(encoded["environment_shift"]), Properties("EnvironmentShift"));
  EXPECT_EQ(KeysOf(encoded["environment_shift"]), Required("EnvironmentShift"));
  EXPECT_EQ(KeysOf(encoded["parameters"]), Properties("VerdictParameters"));
  EXPECT_EQ(KeysOf(encoded["parameters"]["rules"][0]), Properties("ThresholdRule"));
  EXPECT_EQ(KeysOf(encoded["baseline"]), Properties("VerdictBaseline"));
  EXPECT_EQ(KeysOf(encoded["counts"]), Properties("VerdictCounts"));
  EXPECT_EQ(KeysOf(encoded["paired"]), Properties("PairedSummary"));
  const json& row = encoded["results"][0];
  EXPECT_EQ(KeysOf(row), Properties("VerdictResult"));
  EXPECT_EQ(KeysOf(row["paired"]), Properties("PairedDetail"));
  EXPECT_EQ(KeysOf(row["base"]), Properties("VerdictSide"));
  EXPECT_EQ(KeysOf(row["attribution"]), Properties("VerdictAttribution"));
  const YAML::Node attribution = Schema("VerdictAttribution")["properties"];
  EXPECT_EQ(KeysOf(row["attribution"]["moved"][0]),
            KeysOf(attribution["moved"]["items"]["properties"]));
  EXPECT_EQ(KeysOf(row["attribution"]["roofline"]), KeysOf(attribution["roofline"]["properties"]));
  // And what the server writes, the gate reads back whole.
  auto decoded = wire::DecodeVerdict(encoded.dump());
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, verdict);
}

TEST_F(OpenApiDocTest, TheVerdictRequestSchemaNamesExactlyTheKeysTheServerAccepts) {
  const Keys documented = Properties("VerdictRequest");
  for (const std::string& key : documented) {
    const YAML::Node property = Schema("VerdictRequest")["properties"][key];
    ASSERT_TRUE(property.IsMap()) << key;
    json value = nullptr;  // the keys that are only for the record take any value
    if (property["default"].IsDefined()) {
      value = property["type"].as<std::string>() == "string"
                  ? json(property["default"].as<std::string>())
                  : json(property["default"].as<double>());
    } else if (property["type"].IsDefined() && property["type"].as<std::string>() == "array") {
      value = json::array();
    }
    auto decoded = wire::ParseVerdictRequest(json{{key, value}}.dump());
    EXPECT_TRUE(decoded.has_value()) << key << ": " << decoded.error().ToString();
  }
  // The decoder's own list of the keys it acts on.
  auto refused = wire::ParseVerdictRequest(R"({"threshhold": 0.05})");
  ASSERT_FALSE(refused.has_value());
  const std::string message = refused.error().message;
  const size_t open = message.find("(known: ");
  ASSERT_NE(open, std::string::npos) << message;
  std::stringstream known(message.substr(open + 8, message.find(')', open) - open - 8));
  for (std::string key; std::getline(known, key, ',');) {
    key.erase(0, key.find_first_not_of(' '));
    EXPECT_EQ(documented.count(key), 1u) << key << " is accepted but not documented";
  }
  // A stored verdict's parameters can be posted back as they are.
  const json parameters = gate::EncodeParameters(gate::VerdictRequest{});
  for (const std::string& key : KeysOf(parameters)) {
    EXPECT_EQ(documented.count(key), 1u) << key;
  }
  EXPECT_TRUE(wire::ParseVerdictRequest(parameters.dump()).has_value());
}

}  // namespace
}  // namespace perfwarden::server::api
