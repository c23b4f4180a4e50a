// SPDX-License-Identifier: Apache-2.0
// GPU telemetry (runner/telemetry/nvml.h, gpu_sampler.h) against a fake NVML library that the
// tests build (tests/fakes/fake_nvml.cc) with scripted readings: the fingerprint, readings,
// throttling (thermal and power), ECC errors, energy, the summary's metrics, and the errors when
// there is no library, no driver or no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "runner/telemetry/gpu_sampler.h"
#include "runner/telemetry/nvml.h"

namespace perfwarden::telemetry {
namespace {

namespace fs = std::filesystem;

class GpuTelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = fs::temp_directory_path() / ("perfwarden-nvml-" + std::to_string(getpid()) + ".txt");
  }
  void TearDown() override {
    fs::remove(script_);
    unsetenv("FAKE_NVML_SCRIPT");
    unsetenv("FAKE_NVML_INIT_ERROR");
  }
  void Script(const std::string& text) {
    std::ofstream(script_) << text;
    setenv("FAKE_NVML_SCRIPT", script_.c_str(), 1);
  }
  fs::path script_;
};

constexpr const char* kH100 = R"(count 2
name NVIDIA H100 80GB HBM3
driver 550.54.15
cuda 12040
cc 9 0
memory_total 85899345920
app_clocks 1980 2619
power_limit_mw 700000
mig 0
persistence 1
sample 95 60 40000000000 650000 1980 2619 65 0 0
sample 97 61 41000000000 690000 1755 2619 83 64 0
sample 96 62 42000000000 700000 1600 2619 85 68 2
)";

TEST_F(GpuTelemetryTest, FingerprintOfEveryGpu) {
  Script(kH100);
  auto nvml = Nvml::Load(PERFWARDEN_FAKE_NVML);
  ASSERT_TRUE(nvml.has_value()) << nvml.error().ToString();
  const GpuFingerprint f = (*nvml)->Fingerprint();
  EXPECT_EQ(f.driver_version, "550.54.15");
  EXPECT_EQ(f.cuda_driver_version, "12.4");
  ASSERT_EQ(f.gpus.size(), 2u);
  EXPECT_EQ(f.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(f.gpus[0].memory_bytes, 85899345920);
  EXPECT_EQ(f.gpus[0].compute_capability, "9.0");
  EXPECT_EQ(f.gpus[0].app_sm_clock_mhz, 1980);
  EXPECT_EQ(f.gpus[0].app_memory_clock_mhz, 2619);
  EXPECT_EQ(f.gpus[0].power_limit_w, 700);
  EXPECT_EQ(f.gpus[0].mig_mode, "disabled");
  EXPECT_EQ(f.gpus[0].persistence, "enabled");
  const nlohmann::json j = nlohmann::json::parse(ToJson(f));
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["driver"], "550.54.15");
  EXPECT_EQ(j["gpus"][1]["power_limit_w"], 700);
}

TEST_F(GpuTelemetryTest, ReadingsFollowTheScript) {
  Script(kH100);
  auto nvml = Nvml::Load(PERFWARDEN_FAKE_NVML);
  ASSERT_TRUE(nvml.has_value());
  const std::vector<GpuReading> first = (*nvml)->Read();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].utilization, 95);
  EXPECT_EQ(first[1].utilization, 95);
  EXPECT_EQ(first[0].power_w, 650);
  EXPECT_EQ(first[0].memory_used_bytes, 40000000000.0);
  EXPECT_EQ(first[0].throttle_reasons, 0u);
  const std::vector<GpuReading> second = (*nvml)->Read();
  EXPECT_EQ(second[0].sm_clock_mhz, 1755);
  EXPECT_EQ(second[0].temperature_c, 83);
  EXPECT_EQ(second[0].throttle_reasons, kThrottleHwThermal);
  EXPECT_EQ(ThrottleReasonNames(second[0].throttle_reasons), "hw_thermal_slowdown");
}

TEST_F(GpuTelemetryTest, SummaryOfAThrottledRun) {
  // Two GPUs, 0.1 s apart: a cool sample, then thermal, then thermal + power cap, with two new
  // ECC errors; an idle mask (0x1) is not a slowdown.
  std::vector<TimedReading> readings;
  auto reading = [](double util, double power, double clock, std::uint64_t mask, double ecc) {
    GpuReading g;
    g.utilization = util;
    g.memory_utilization = 50;
    g.memory_used_bytes = 1e9 * util / 100;
    g.power_w = power;
    g.sm_clock_mhz = clock;
    g.temperature_c = 60 + util / 10;
    g.throttle_reasons = mask;
    g.ecc_uncorrected = ecc;
    return g;
  };
  readings.push_back({0.0, {reading(90, 600, 1980, 0x1, 0), reading(90, 600, 1980, 0, 0)}});
  readings.push_back({0.1, {reading(95, 650, 1755, 0x40, 0), reading(95, 650, 1980, 0, 0)}});
  readings.push_back({0.2, {reading(100, 700, 1600, 0x44, 2), reading(100, 700, 1980, 0, 0)}});
  const GpuSummary s = Summarize(readings);
  EXPECT_EQ(s.samples, 3);
  EXPECT_EQ(s.gpus, 2);
  EXPECT_NEAR(s.duration_s, 0.2, 1e-12);
  EXPECT_NEAR(s.utilization_mean, 95, 1e-12);
  EXPECT_EQ(s.memory_peak_bytes, 1e9);
  EXPECT_NEAR(s.power_mean_w, (1200 + 1300 + 1400) / 3.0, 1e-9);
  // Trapezoids: (1200 + 1300) / 2 * 0.1 + (1300 + 1400) / 2 * 0.1.
  EXPECT_NEAR(s.energy_j, 260, 1e-9);
  EXPECT_EQ(s.sm_clock_min_mhz, 1600);
  EXPECT_EQ(s.temperature_max_c, 70);
  EXPECT_NEAR(s.throttled_fraction, 2.0 / 3, 1e-12);
  EXPECT_TRUE(s.thermal_throttled);
  EXPECT_TRUE(s.power_throttled);
  EXPECT_TRUE(s.Throttled());
  EXPECT_EQ(s.ecc_errors, 2);
  EXPECT_EQ(s.ThrottleNote(),
            "thermal and power throttling (sw_power_cap,hw_thermal_slowdown) in 67% of the "
            "samples");
  const auto series = GpuSeries(s, "mlp", "mlp", 26000);
  std::map<std::string, double> by;
  for (const auto& x : series) {
    ASSERT_EQ(x.values.size(), 1u);
    by[x.key.metric] = x.values[0];
  }
  EXPECT_NEAR(by.at("gpu_utilization"), 95, 1e-12);
  EXPECT_NEAR(by.at("gpu_energy"), 260, 1e-9);
  EXPECT_NEAR(by.at("gpu_throttled_fraction"), 2.0 / 3, 1e-12);
  EXPECT_NEAR(by.at("samples_per_joule"), 26000 / 1300.0, 1e-9);
  EXPECT_EQ(by.at("gpu_ecc_errors"), 2);
}

TEST_F(GpuTelemetryTest, ACoolRunIsNotThrottledAndUnreportedFieldsAreLeftOut) {
  std::vector<TimedReading> readings;
  GpuReading g;  // everything unreported but utilisation
  g.utilization = 80;
  g.throttle_reasons = kThrottleGpuIdle | kThrottleApplicationsClocks;
  readings.push_back({0.0, {g}});
  readings.push_back({0.1, {g}});
  const GpuSummary s = Summarize(readings);
  EXPECT_FALSE(s.Throttled());
  EXPECT_EQ(s.ThrottleNote(), "");
  EXPECT_EQ(s.energy_j, -1);
  std::set<std::string> metrics;
  for (const auto& x : GpuSeries(s, "s", "b", 0)) metrics.insert(x.key.metric);
  EXPECT_EQ(metrics,
            (std::set<std::string>{"gpu_utilization", "gpu_throttled_fraction", "gpu_ecc_errors"}));
  EXPECT_TRUE(GpuSeries(Summarize({}), "s", "b", 0).empty());
}

TEST_F(GpuTelemetryTest, TheSamplerReadsWhileARunGoesOn) {
  Script(kH100);
  auto nvml = Nvml::Load(PERFWARDEN_FAKE_NVML);
  ASSERT_TRUE(nvml.has_value());
  GpuSampler sampler(**nvml, std::chrono::milliseconds(5));
  sampler.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const GpuSummary s = sampler.Stop();
  EXPECT_GE(s.samples, 2);  // the first and the last at least
  EXPECT_EQ(s.gpus, 2);
  EXPECT_TRUE(s.thermal_throttled);  // the script's second sample is throttled
  EXPECT_GT(s.energy_j, 0);
  if (s.samples >= 3) {
    EXPECT_EQ(s.ecc_errors, 2 * 2);  // 0 -> 2 on each of the two GPUs
  }
}

TEST_F(GpuTelemetryTest, NoLibraryNoDriverNoGpu) {
  auto missing = Nvml::Load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(missing.error().message.find("NVML not loaded"), std::string::npos);
  Script(kH100);
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);
  auto no_driver = Nvml::Load(PERFWARDEN_FAKE_NVML);
  ASSERT_FALSE(no_driver.has_value());
  EXPECT_NE(no_driver.error().message.find("Driver Not Loaded"), std::string::npos)
      << no_driver.error().message;
  unsetenv("FAKE_NVML_INIT_ERROR");
  Script("count 0\n");
  auto no_gpu = Nvml::Load(PERFWARDEN_FAKE_NVML);
  ASSERT_FALSE(no_gpu.has_value());
  EXPECT_NE(no_gpu.error().message.find("no GPU"), std::string::npos);
  // $PERFWARDEN_NVML_LIBRARY names the library when Load gets none.
  Script(kH100);
  setenv("PERFWARDEN_NVML_LIBRARY", PERFWARDEN_FAKE_NVML, 1);
  auto from_env = Nvml::Load();
  unsetenv("PERFWARDEN_NVML_LIBRARY");
  ASSERT_TRUE(from_env.has_value()) << from_env.error().ToString();
  EXPECT_EQ((*from_env)->device_count(), 2u);
}

}  // namespace
}  // namespace perfwarden::telemetry
