// SPDX-License-Identifier: Apache-2.0
// Remote bisects over real HTTP (perfwarden-server on loopback, real PostgreSQL): the routes'
// validation names the field and stores nothing, the claim protocol (tokens, leases, 204 when
// nothing is queued, 409 once a claim is lost, 400 for a measurement of another request), and a
// whole remote bisect driven by this test acting as the agent, posting synthetic measurements
// for every step until the server's replay names the planted culprit.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/test_server.h"

namespace perfwarden::testing {
namespace {

using nlohmann::json;

constexpr int kCommits = 16;  // positions 0 (good) .. 15 (bad)
constexpr int kStep = 9;      // the planted culprit: positions >= 9 are 10% slower

std::string Sha(int position) {
  char buffer[41];
  std::snprintf(buffer, sizeof(buffer), "%040x", 0xc0ffee00 + position);
  return buffer;
}

json Commits(int count = kCommits) {
  json commits = json::array();
  for (int i = 0; i < count; ++i) {
    commits.push_back(
        {{"sha", Sha(i)}, {"subject", "commit " + std::to_string(i)}, {"author", "Ann"}});
  }
  return commits;
}

json RemoteBody() {
  return {{"remote", true},       {"testbed", "gpu-1"},
          {"good", Sha(0)},       {"bad", Sha(kCommits - 1)},
          {"commits", Commits()}, {"benchmarks", {"BM_Train"}},
          {"suite", "train"},     {"metric", "real_time"},
          {"build", ""},          {"options", {{"repetitions", 8}, {"max_repetitions", 32}}}};
}

// Samples of `position` for one step: about 100 before the culprit and 110 from it, with small
// deterministic noise.
std::vector<double> Samples(std::size_t position, int repetitions, int salt) {
  std::vector<double> out;
  const double level = position < static_cast<std::size_t>(kStep) ? 100.0 : 110.0;
  for (int i = 0; i < repetitions; ++i) {
    const int wobble = (i * 7 + static_cast<int>(position) * 3 + salt * 5) % 11;
    out.push_back(level + 0.1 * (wobble - 5));
  }
  return out;
}

// What an agent measures for a claimed step.
json MeasurementFor(const json& step, int salt) {
  json results = json::array();
  const int repetitions = step["request"]["repetitions"].get<int>();
  for (const json& target : step["request"]["targets"]) {
    results.push_back({{"samples", Samples(target.get<std::size_t>(), repetitions, salt)}});
  }
  return {{"request", step["request"]},
          {"results", results},
          {"suite", "train"},
          {"metric", "real_time"},
          {"direction", "lower"}};
}

class BisectQueueE2eTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
    agent_ = Token({"ingest", "read"});
    reader_ = Token({"read"});
  }

  std::string Token(const std::vector<std::string>& scopes) {
    HttpResponse made = http_->Post("/api/v1/projects/proj/tokens",
                                    json{{"name", "agent"}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(made.status, 201) << made.body;
    return made.Json().value("token", "");
  }

  HttpResponse Post(const std::string& path, const json& body, const std::string& token = "") {
    return http_->Post("/api/v1/projects/proj" + path, body.dump(), token.empty() ? agent_ : token);
  }

  json Queue() {
    HttpResponse queued = Post("/bisects", RemoteBody());
    EXPECT_EQ(queued.status, 201) << queued.body;
    return queued.Json()["bisect"];
  }

  json ClaimStep(const std::string& testbed = "gpu-1") {
    HttpResponse claimed = Post("/bisect-steps/claim", {{"testbed", testbed}, {"agent", "a1"}});
    EXPECT_TRUE(claimed.status == 200 || claimed.status == 204) << claimed.body;
    return claimed.status == 200 ? claimed.Json()["step"] : json();
  }

  json GetBisect(int64_t id) {
    HttpResponse got = http_->Get("/api/v1/projects/proj/bisects/" + std::to_string(id), reader_);
    EXPECT_EQ(got.status, 200) << got.body;
    return got.Json()["bisect"];
  }

  std::string agent_, reader_;
};

TEST_F(BisectQueueE2eTest, QueueValidationNamesTheFieldAndStoresNothing) {
  struct Case {
    const char* name;
    std::function<void(json&)> mutate;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"bad sha", [](json& b) { b["good"] = "not-a-sha"; }, "good"},
      {"upper-case sha", [](json& b) { b["bad"] = std::string(40, 'A'); }, "bad"},
      {"commits not starting at good", [](json& b) { b["commits"].erase(b["commits"].begin()); },
       "commits[0].sha"},
      {"commits not ending at bad", [](json& b) { b["commits"].erase(b["commits"].end() - 1); },
       "commits[14].sha"},
      {"one commit", [](json& b) { b["commits"] = json::array({b["commits"][0]}); }, "commits"},
      {"short commit sha", [](json& b) { b["commits"][3]["sha"] = "abc"; }, "commits[3].sha"},
      {"repeated commit", [](json& b) { b["commits"][4] = b["commits"][3]; }, "commits[4].sha"},
      {"missing benchmarks", [](json& b) { b.erase("benchmarks"); }, "benchmarks"},
      {"empty benchmarks", [](json& b) { b["benchmarks"] = json::array(); }, "benchmarks"},
      {"missing testbed", [](json& b) { b.erase("testbed"); }, "testbed"},
      {"bad option", [](json& b) { b["options"]["repetitions"] = 1; }, "options.repetitions"},
      {"unknown option", [](json& b) { b["options"]["speed"] = 2; }, "options.speed"},
      {"unknown field", [](json& b) { b["colour"] = "red"; }, "colour"},
      {"remote not a boolean", [](json& b) { b["remote"] = "yes"; }, "remote"},
      {"bad alert id", [](json& b) { b["alert_id"] = -3; }, "alert_id"},
  };
  for (const Case& c : cases) {
    json body = RemoteBody();
    c.mutate(body);
    HttpResponse refused = Post("/bisects", body);
    EXPECT_EQ(refused.status, 400) << c.name << ": " << refused.body;
    EXPECT_EQ(refused.ErrorField(), c.field) << c.name << ": " << refused.body;
  }
  json missing_alert = RemoteBody();
  missing_alert["alert_id"] = 77;
  EXPECT_EQ(Post("/bisects", missing_alert).status, 404);
  EXPECT_EQ(http_->Post("/api/v1/projects/proj/bisects", RemoteBody().dump(), "").status, 401);
  EXPECT_EQ(Post("/bisects", RemoteBody(), reader_).status, 403);
  // Nothing was stored: the first bisect queued now is number 1, and nothing is claimable.
  EXPECT_TRUE(ClaimStep().is_null());
  EXPECT_EQ(Queue()["id"], 1);
}

TEST_F(BisectQueueE2eTest, ClaimValidationAndTestbeds) {
  Queue();
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"testbed", "gpu-1"}, {"agent", "a1"}, {"lease_seconds", 4}}, "lease_seconds"},
      {{{"testbed", "gpu-1"}, {"agent", "a1"}, {"lease_seconds", 3601}}, "lease_seconds"},
      {{{"testbed", "gpu-1"}, {"agent", "a1"}, {"lease_seconds", "60"}}, "lease_seconds"},
      {{{"testbed", "gpu-1"}}, "agent"},
      {{{"agent", "a1"}}, "testbed"},
      {{{"testbed", "gpu-1"}, {"agent", "a1"}, {"queue", "x"}}, "queue"},
  };
  for (const auto& [body, field] : cases) {
    HttpResponse refused = Post("/bisect-steps/claim", body);
    EXPECT_EQ(refused.status, 400) << body.dump() << ": " << refused.body;
    EXPECT_EQ(refused.ErrorField(), field) << body.dump() << ": " << refused.body;
  }
  const json claim = {{"testbed", "gpu-1"}, {"agent", "a1"}};
  EXPECT_EQ(http_->Post("/api/v1/projects/proj/bisect-steps/claim", claim.dump(), "").status, 401);
  EXPECT_EQ(Post("/bisect-steps/claim", claim, reader_).status, 403);
  EXPECT_EQ(Post("/bisect-steps/claim", {{"testbed", "cpu-1"}, {"agent", "a1"}}).status, 204);

  HttpResponse claimed = Post("/bisect-steps/claim", {{"testbed", "gpu-1"}, {"agent", "a1"}});
  ASSERT_EQ(claimed.status, 200) << claimed.body;
  const json step = claimed.Json()["step"];
  EXPECT_EQ(step["ordinal"], 0);
  EXPECT_EQ(step["attempt"], 1);
  EXPECT_EQ(step["lease_seconds"], 60);
  EXPECT_EQ(step["token"].get<std::string>().size(), 32u);
  EXPECT_EQ(step["request"]["targets"], json({0, kCommits - 1}));
  EXPECT_EQ(step["request"]["repetitions"], 8);
  EXPECT_EQ(
      step["commits"],
      json({{{"position", 0}, {"sha", Sha(0)}, {"subject", "commit 0"}},
            {{"position", kCommits - 1}, {"sha", Sha(kCommits - 1)}, {"subject", "commit 15"}}}));
  EXPECT_EQ(step["good"], Sha(0));
  EXPECT_EQ(step["bad"], Sha(kCommits - 1));
  EXPECT_EQ(step["benchmarks"], json({"BM_Train"}));
  EXPECT_EQ(step["suite"], "train");
  EXPECT_EQ(step["metric"], "real_time");
  EXPECT_EQ(Post("/bisect-steps/claim", claim).status, 204);  // held
}

TEST_F(BisectQueueE2eTest, ClaimTokensLeasesAndCancel) {
  const int64_t id = Queue()["id"].get<int64_t>();
  const json step = ClaimStep();
  ASSERT_TRUE(step.is_object());
  const std::string base = "/bisect-steps/" + std::to_string(step["id"].get<int64_t>());
  const std::string token = step["token"];
  const std::string wrong(32, '0');

  HttpResponse beat = Post(base + "/heartbeat", {{"token", token}});
  ASSERT_EQ(beat.status, 200) << beat.body;
  EXPECT_EQ(beat.Json()["step"]["lease_seconds"], 60);
  EXPECT_TRUE(beat.Json()["step"]["lease_expires_at"].is_string());
  EXPECT_EQ(Post(base + "/heartbeat", {{"token", wrong}}).status, 409);
  HttpResponse malformed = Post(base + "/heartbeat", {{"token", "abc"}});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.ErrorField(), "token");
  EXPECT_EQ(Post(base + "/heartbeat", {{"token", token}, {"lease_seconds", 2}}).ErrorField(),
            "lease_seconds");
  EXPECT_EQ(Post("/bisect-steps/987654/heartbeat", {{"token", token}}).status, 404);

  HttpResponse wrong_token =
      Post(base + "/result", {{"token", wrong}, {"measurement", MeasurementFor(step, 0)}});
  EXPECT_EQ(wrong_token.status, 409) << wrong_token.body;
  json other_request = step;
  other_request["request"]["repetitions"] = 9;
  HttpResponse mismatch =
      Post(base + "/result", {{"token", token}, {"measurement", MeasurementFor(other_request, 0)}});
  EXPECT_EQ(mismatch.status, 400) << mismatch.body;
  EXPECT_EQ(mismatch.ErrorField(), "measurement.request");
  json wrong_metric = MeasurementFor(step, 0);
  wrong_metric["metric"] = "cpu_time";
  EXPECT_EQ(Post(base + "/result", {{"token", token}, {"measurement", wrong_metric}}).ErrorField(),
            "measurement.metric");
  json short_results = MeasurementFor(step, 0);
  short_results["results"].erase(short_results["results"].begin());
  EXPECT_EQ(Post(base + "/result", {{"token", token}, {"measurement", short_results}}).ErrorField(),
            "measurement.results");
  EXPECT_EQ(Post(base + "/result", {{"token", token}}).ErrorField(), "measurement");
  EXPECT_EQ(Post(base + "/result", {{"token", token}, {"error", ""}}).ErrorField(), "error");

  // Nothing of the refused reports was stored: the step is still claimed, without a result.
  json shown = GetBisect(id);
  EXPECT_EQ(shown["state"], "running");
  EXPECT_EQ(shown["remote"]["testbed"], "gpu-1");
  EXPECT_EQ(shown["remote"]["commits"], kCommits - 1);
  ASSERT_EQ(shown["steps"].size(), 1u);
  EXPECT_EQ(shown["steps"][0]["state"], "claimed");
  EXPECT_EQ(shown["steps"][0]["agent"], "a1");
  EXPECT_EQ(shown["steps"][0]["targets"], json({0, kCommits - 1}));
  EXPECT_EQ(shown["progress"]["pending"]["targets"], json({0, kCommits - 1}));
  EXPECT_EQ(shown["progress"]["probes"], json::array());

  HttpResponse cancelled = Post("/bisects/" + std::to_string(id) + "/cancel", json::object());
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(cancelled.Json()["bisect"]["state"], "cancelled");
  EXPECT_EQ(cancelled.Json()["bisect"]["steps"][0]["state"], "cancelled");
  EXPECT_EQ(
      Post(base + "/result", {{"token", token}, {"measurement", MeasurementFor(step, 0)}}).status,
      409);
  EXPECT_EQ(Post(base + "/heartbeat", {{"token", token}}).status, 409);
  EXPECT_EQ(Post("/bisects/987654/cancel", json::object()).status, 404);
  EXPECT_TRUE(ClaimStep().is_null());
}

TEST_F(BisectQueueE2eTest, AGoodEndThatDoesNotBuildFailsTheBisect) {
  const int64_t id = Queue()["id"].get<int64_t>();
  for (int attempt = 1; attempt <= 2; ++attempt) {  // an agent's error requeues the step
    const json step = ClaimStep();
    ASSERT_TRUE(step.is_object());
    EXPECT_EQ(step["attempt"], attempt);
    HttpResponse failed =
        Post("/bisect-steps/" + std::to_string(step["id"].get<int64_t>()) + "/result",
             {{"token", step["token"]}, {"error", "the repository has no such commit"}});
    ASSERT_EQ(failed.status, 200) << failed.body;
    EXPECT_EQ(failed.Json()["bisect"]["steps"][0]["last_error"],
              "the repository has no such commit");
  }
  const json step = ClaimStep();
  ASSERT_TRUE(step.is_object());
  json measurement = MeasurementFor(step, 0);
  measurement["results"][0] = {
      {"skipped", true}, {"note", "build failed: error: oops"}, {"samples", json::array()}};
  HttpResponse reported =
      Post("/bisect-steps/" + std::to_string(step["id"].get<int64_t>()) + "/result",
           {{"token", step["token"]}, {"measurement", measurement}, {"builds", 2}, {"runs", 1}});
  ASSERT_EQ(reported.status, 200) << reported.body;
  const json b = GetBisect(id);
  EXPECT_EQ(b["state"], "failed");
  EXPECT_NE(b["error"].get<std::string>().find("build failed: error: oops"), std::string::npos)
      << b.dump();
  EXPECT_FALSE(b.contains("progress"));
  EXPECT_TRUE(b["culprit"].is_null());
}

TEST_F(BisectQueueE2eTest, ARemoteBisectFindsThePlantedCulprit) {
  const int64_t id = Queue()["id"].get<int64_t>();
  int steps = 0;
  json last;
  for (; steps < 100; ++steps) {  // a bound on a broken replay, not on time
    const json step = ClaimStep();
    if (step.is_null()) break;
    EXPECT_EQ(step["ordinal"], steps);
    HttpResponse reported =
        Post("/bisect-steps/" + std::to_string(step["id"].get<int64_t>()) + "/result",
             {{"token", step["token"]},
              {"measurement", MeasurementFor(step, steps)},
              {"builds", step["request"]["targets"].size()},
              {"runs", step["request"]["targets"].size()}});
    ASSERT_EQ(reported.status, 200) << reported.body;
    last = reported.Json()["bisect"];
    if (steps == 0) {
      const json running = GetBisect(id);
      EXPECT_EQ(running["state"], "running");
      EXPECT_TRUE(running["progress"]["endpoints"]["reproduced"].get<bool>()) << running.dump();
      EXPECT_TRUE(running["progress"]["pending"].is_object()) << running.dump();
    }
  }
  EXPECT_EQ(last["state"], "succeeded") << last.dump(2);
  EXPECT_EQ(last["culprit"], Sha(kStep)) << last.dump(2);
  const json b = GetBisect(id);
  EXPECT_EQ(b["state"], "succeeded");
  EXPECT_FALSE(b.contains("progress"));
  EXPECT_TRUE(b["finished_at"].is_string());
  ASSERT_EQ(b["steps"].size(), static_cast<std::size_t>(steps));
  for (const json& s : b["steps"]) EXPECT_EQ(s["state"], "done") << s.dump();
  const json report = b["report"];
  ASSERT_EQ(report["culprits"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["culprits"][0]["sha"], Sha(kStep));
  EXPECT_EQ(report["culprits"][0]["subject"], "commit 9");
  EXPECT_EQ(report["benchmarks"], json({"BM_Train"}));
  EXPECT_EQ(report["suite"], "train");
  EXPECT_EQ(report["measurements"], steps);
  EXPECT_GT(report["builds"].get<int>(), 0);
  EXPECT_NEAR(report["culprits"][0]["magnitude"].get<double>(), 0.10, 0.01);
  // About log2(15) probes, not a walk over the range.
  EXPECT_LE(report["probes"].size(), 6u) << report.dump(2);
  EXPECT_EQ(Post("/bisects/" + std::to_string(id) + "/cancel", json::object()).status, 409);
}

// server.yaml's limits.open_bisects_per_testbed reaches the route.
class BisectCapE2eTest : public BisectQueueE2eTest {
 protected:
  void Customize(config::ServerConfig& config) override {
    config.limits.open_bisects_per_testbed = 1;
  }
};

TEST_F(BisectCapE2eTest, TheBisectOverTheTestbedsCapIs409AndNotStored) {
  const int64_t first = Queue()["id"].get<int64_t>();
  HttpResponse refused = Post("/bisects", RemoteBody());
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.ErrorField(), "testbed");
  EXPECT_NE(refused.body.find("open_bisects_per_testbed 1"), std::string::npos) << refused.body;
  // Cancelled, the first gives its place back; the next id shows nothing was stored between.
  ASSERT_EQ(Post("/bisects/" + std::to_string(first) + "/cancel", json::object()).status, 200);
  EXPECT_EQ(Queue()["id"].get<int64_t>(), first + 1);
}

}  // namespace
}  // namespace perfwarden::testing
