// SPDX-License-Identifier: Apache-2.0
// GPU hosts end to end, without a GPU: `perfwarden run` of a training benchmark (a script that
// prints perfwarden's JSON lines) on a "GPU host" whose NVML is the fake library the tests build
// (tests/fakes/fake_nvml.cc, scripted readings). The run carries the GPU fingerprint and the
// GPU metrics, a throttled run says so, and a driver upgrade makes a new testbed fingerprint, so
// the gate does not compare the new driver's run with the old driver's baseline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/bisect_repo.h"
#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTrainScript = R"(echo "training"
echo '{"event":"info","key":"device","value":"NVIDIA H100 80GB HBM3"}'
echo '{"event":"step","step":0,"warmup":true,"time_s":0.5}'
for i in 1 2 3 4 5 6 7 8; do
  echo "{\"event\":\"step\",\"step\":$i,\"time_s\":0.010$i,\"values\":{\"loss\":2.$((9 - i))}}"
done
echo '{"event":"metric","name":"samples_per_s","value":25000,"unit":"samples/s"}'
echo '{"event":"end"}'
)";

std::string NvmlScript(const std::string& driver, bool throttled) {
  return "count 2\nname NVIDIA H100 80GB HBM3\ndriver " + driver +
         "\ncuda 12040\ncc 9 0\nmemory_total 85899345920\npower_limit_mw 700000\n"
         "sample 95 60 40000000000 650000 1980 2619 65 0 0\n" +
         (throttled ? "sample 97 61 41000000000 690000 1600 2619 88 64 0\n" : "");
}

class GpuE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
    repo_ = std::make_unique<testing::SyntheticRepo>("gpu");
    ASSERT_TRUE(repo_->ok());
    std::ofstream(repo_->path() / "perfwarden.yaml")
        << "version: 1\nserver: {url: \"http://127.0.0.1:" << app_->port()
        << "\", project: proj}\ntarget_branch: main\ntestbed: h100\nsuites:\n"
        << "  - {name: mlp, type: train, command: sh train.sh}\n";
    std::ofstream(repo_->path() / "train.sh") << kTrainScript;
    script_ = repo_->path().string() + "-nvml.txt";
  }
  void TearDown() override {
    fs::remove(script_);
    repo_.reset();
    ServerTest::TearDown();
  }

  // perfwarden on a host whose NVML answers from `nvml` (a fake_nvml script).
  testing::ShellOutcome Perfwarden(const std::string& args, const std::string& nvml) {
    std::ofstream(script_) << nvml;
    return testing::RunShell(
        "cd " + repo_->path().string() + " && PERFWARDEN_TOKEN=" + admin_ + testing::AsanEnv() +
        " PERFWARDEN_NVML_LIBRARY=" + PERFWARDEN_FAKE_NVML + " FAKE_NVML_SCRIPT=" + script_ + " " +
        PERFWARDEN_BIN_DIR + "/perfwarden " + args);
  }

  void Commit(const std::string& message) {
    ASSERT_EQ(repo_->Git("add -A").exit_code, 0);
    ASSERT_EQ(repo_->Git("commit -q -m '" + message + "'").exit_code, 0);
  }

  // The only upload in the spool.
  json Spooled() {
    for (const auto& entry : fs::directory_iterator(repo_->path() / ".perfwarden" / "spool")) {
      if (entry.path().extension() == ".json") {
        std::ifstream in(entry.path());
        return json::parse(in);
      }
    }
    return json();
  }

  std::unique_ptr<testing::SyntheticRepo> repo_;
  std::string script_;
};

TEST_F(GpuE2eTest, ATrainingRunCarriesTheGpusFingerprintMetricsAndThrottling) {
  Commit("base");
  const testing::ShellOutcome run = Perfwarden("run --no-push", NvmlScript("550.54.15", true));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("GPU telemetry: 2 x NVIDIA H100 80GB HBM3, driver 550.54.15"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("thermal throttling (hw_thermal_slowdown)"), std::string::npos)
      << run.output;
  const json upload = Spooled();
  ASSERT_TRUE(upload.is_object());
  const json fingerprint = upload["testbed"]["fingerprint"];
  EXPECT_EQ(fingerprint["gpu"]["driver"], "550.54.15") << fingerprint.dump(2);
  EXPECT_EQ(fingerprint["gpu"]["count"], 2);
  EXPECT_EQ(fingerprint["gpu"]["gpus"][0]["compute_capability"], "9.0");
  std::map<std::string, json> by_metric;
  for (const json& s : upload["results"]) by_metric[s["metric"].get<std::string>()] = s;
  ASSERT_TRUE(by_metric.count("step_time")) << upload["results"].dump(1);
  EXPECT_EQ(by_metric["step_time"]["values"].size(), 8u);  // the warm-up step left out
  EXPECT_EQ(by_metric["step_loss"]["values"].size(), 8u);
  EXPECT_EQ(by_metric["samples_per_s"]["values"], json::array({25000}));
  for (const char* gpu_metric :
       {"gpu_utilization", "gpu_power", "gpu_energy", "gpu_sm_clock", "gpu_memory_peak",
        "gpu_throttled_fraction", "samples_per_joule"}) {
    EXPECT_TRUE(by_metric.count(gpu_metric)) << gpu_metric << ": " << upload["results"].dump(1);
  }
  EXPECT_GT(by_metric["gpu_throttled_fraction"]["values"][0].get<double>(), 0);
  ASSERT_EQ(Perfwarden("push", NvmlScript("550.54.15", true)).exit_code, 0);
}

TEST_F(GpuE2eTest, ADriverUpgradeIsANewFingerprintNotARegression) {
  Commit("base");
  ASSERT_EQ(Perfwarden("run", NvmlScript("550.54.15", false)).exit_code, 0);
  ASSERT_EQ(repo_->Git("checkout -q -b pr").exit_code, 0);
  std::ofstream(repo_->path() / "x") << "x\n";
  Commit("pr");
  // The same host after a driver upgrade: its runs are a new fingerprint of testbed h100.
  const std::string upgraded = NvmlScript("555.42.02", false);
  ASSERT_EQ(Perfwarden("run", upgraded).exit_code, 0);
  const testing::ShellOutcome gate = Perfwarden("gate --color never", upgraded);
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  EXPECT_NE(gate.output.find("different host fingerprint"), std::string::npos) << gate.output;
  // With the old driver again, the baseline is found.
  ASSERT_EQ(Perfwarden("run", NvmlScript("550.54.15", false)).exit_code, 0);
  const testing::ShellOutcome same =
      Perfwarden("gate --color never", NvmlScript("550.54.15", false));
  EXPECT_EQ(same.output.find("different host fingerprint"), std::string::npos) << same.output;
  EXPECT_EQ(same.output.find("baseline: none"), std::string::npos) << same.output;
  EXPECT_NE(gate.output.find("baseline: none"), std::string::npos) << gate.output;
}

}  // namespace
}  // namespace perfwarden
