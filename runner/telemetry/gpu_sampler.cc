// SPDX-License-Identifier: Apache-2.0
#include "runner/telemetry/gpu_sampler.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace perfwarden::telemetry {
namespace {

// Mean of the non-negative values (NVML's "not reported" is -1 here); -1 when none.
struct Mean {
  double sum = 0;
  int n = 0;
  void Add(double x) {
    if (x >= 0) {
      sum += x;
      ++n;
    }
  }
  double Value() const { return n > 0 ? sum / n : -1; }
};

}  // namespace

std::string GpuSummary::ThrottleNote() const {
  if (!Throttled()) return "";
  char text[160];
  std::snprintf(text, sizeof text, "%s throttling (%s) in %.0f%% of the samples",
                thermal_throttled && power_throttled ? "thermal and power"
                : thermal_throttled                  ? "thermal"
                : power_throttled                    ? "power"
                                                     : "hardware",
                ThrottleReasonNames(reasons_seen).c_str(), 100 * throttled_fraction);
  return text;
}

GpuSummary Summarize(const std::vector<TimedReading>& readings) {
  GpuSummary s;
  s.samples = static_cast<int>(readings.size());
  if (readings.empty()) return s;
  s.gpus = static_cast<int>(readings.front().gpus.size());
  s.duration_s = readings.back().t_s - readings.front().t_s;
  Mean util, memory_util, sm_clock, power;
  int throttled = 0;
  double energy = 0;
  bool power_known = false;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const TimedReading& r = readings[i];
    bool slowed = false;
    double total_power = 0;
    bool any_power = false;
    for (const GpuReading& g : r.gpus) {
      util.Add(g.utilization);
      memory_util.Add(g.memory_utilization);
      sm_clock.Add(g.sm_clock_mhz);
      s.memory_peak_bytes = std::max(s.memory_peak_bytes, g.memory_used_bytes);
      s.temperature_max_c = std::max(s.temperature_max_c, g.temperature_c);
      if (g.sm_clock_mhz >= 0) {
        s.sm_clock_min_mhz =
            s.sm_clock_min_mhz < 0 ? g.sm_clock_mhz : std::min(s.sm_clock_min_mhz, g.sm_clock_mhz);
      }
      if (g.power_w >= 0) {
        total_power += g.power_w;
        any_power = true;
      }
      const std::uint64_t slowing = g.throttle_reasons & kThrottleSlowing;
      if (slowing != 0) {
        slowed = true;
        s.reasons_seen |= slowing;
        s.power_throttled |= (slowing & kThrottlePower) != 0;
        s.thermal_throttled |= (slowing & kThrottleThermal) != 0;
      }
    }
    if (slowed) ++throttled;
    if (any_power) {
      power.Add(total_power);
      power_known = true;
    }
    if (i > 0 && any_power) {
      // Trapezoid between this reading and the one before (when that one had power too).
      double before = 0;
      bool before_known = false;
      for (const GpuReading& g : readings[i - 1].gpus) {
        if (g.power_w >= 0) {
          before += g.power_w;
          before_known = true;
        }
      }
      if (before_known) energy += (before + total_power) / 2 * (r.t_s - readings[i - 1].t_s);
    }
  }
  s.utilization_mean = util.Value();
  s.memory_utilization_mean = memory_util.Value();
  s.sm_clock_mean_mhz = sm_clock.Value();
  s.power_mean_w = power.Value();
  s.energy_j = power_known && readings.size() > 1 ? energy : -1;
  s.throttled_fraction = static_cast<double>(throttled) / static_cast<double>(readings.size());
  // New uncorrected ECC errors: last minus first count, per GPU.
  for (std::size_t g = 0; g < readings.front().gpus.size(); ++g) {
    const double first = readings.front().gpus[g].ecc_uncorrected;
    const double last =
        g < readings.back().gpus.size() ? readings.back().gpus[g].ecc_uncorrected : -1;
    if (first >= 0 && last >= first) s.ecc_errors += last - first;
  }
  return s;
}

std::vector<wire::ResultSeries> GpuSeries(const GpuSummary& s, const std::string& suite,
                                          const std::string& benchmark, double samples_per_s) {
  std::vector<wire::ResultSeries> out;
  auto add = [&](const char* metric, const char* unit, Direction direction, double value) {
    if (value < 0 || !std::isfinite(value)) return;
    wire::ResultSeries series;
    series.key = {suite, benchmark, metric};
    series.unit = unit;
    series.direction = direction;
    series.values = {value};
    out.push_back(std::move(series));
  };
  if (s.samples == 0) return out;
  const Direction lower = Direction::kLowerIsBetter, higher = Direction::kHigherIsBetter;
  add("gpu_utilization", "%", higher, s.utilization_mean);
  add("gpu_memory_utilization", "%", higher, s.memory_utilization_mean);
  add("gpu_memory_peak", "bytes", lower, s.memory_peak_bytes);
  add("gpu_power", "W", lower, s.power_mean_w);
  add("gpu_energy", "J", lower, s.energy_j);
  add("gpu_sm_clock", "MHz", higher, s.sm_clock_mean_mhz);
  add("gpu_temperature_max", "C", lower, s.temperature_max_c);
  add("gpu_throttled_fraction", "ratio", lower, s.throttled_fraction);
  add("gpu_ecc_errors", "count", lower, s.ecc_errors);
  if (samples_per_s > 0 && s.power_mean_w > 0) {
    add("samples_per_joule", "samples/J", higher, samples_per_s / s.power_mean_w);
  }
  return out;
}

std::string ToJson(const GpuFingerprint& f) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuInfo& g : f.gpus) {
    nlohmann::ordered_json j = {{"name", g.name}};
    if (g.memory_bytes > 0) j["memory_bytes"] = g.memory_bytes;
    if (!g.compute_capability.empty()) j["compute_capability"] = g.compute_capability;
    if (g.app_sm_clock_mhz > 0) j["app_sm_clock_mhz"] = g.app_sm_clock_mhz;
    if (g.app_memory_clock_mhz > 0) j["app_memory_clock_mhz"] = g.app_memory_clock_mhz;
    if (g.power_limit_w > 0) j["power_limit_w"] = g.power_limit_w;
    if (!g.mig_mode.empty()) j["mig_mode"] = g.mig_mode;
    if (!g.persistence.empty()) j["persistence_mode"] = g.persistence;
    gpus.push_back(std::move(j));
  }
  nlohmann::ordered_json out = {{"count", f.gpus.size()}};
  if (!f.driver_version.empty()) out["driver"] = f.driver_version;
  if (!f.cuda_driver_version.empty()) out["cuda_driver"] = f.cuda_driver_version;
  out["gpus"] = std::move(gpus);
  return out.dump();
}

GpuSampler::GpuSampler(const Nvml& nvml, std::chrono::milliseconds period)
    : nvml_(nvml), period_(period) {}

GpuSampler::~GpuSampler() {
  if (running_) Stop();
}

void GpuSampler::Start() {
  if (running_) return;
  {
    std::lock_guard lock(mutex_);
    readings_.clear();
  }
  started_ = std::chrono::steady_clock::now();
  running_ = true;
  thread_ = std::thread([this] { Loop(); });
}

void GpuSampler::Loop() {
  auto next = started_;
  while (running_) {
    TimedReading r;
    r.gpus = nvml_.Read();
    r.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    {
      std::lock_guard lock(mutex_);
      readings_.push_back(std::move(r));
    }
    next += period_;
    // Sleeps in short slices, so that Stop does not wait a whole period.
    while (running_ && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(10), next - std::chrono::steady_clock::now()));
    }
  }
}

GpuSummary GpuSampler::Stop() {
  if (!running_) return Summarize({});
  running_ = false;
  thread_.join();
  TimedReading last;
  last.gpus = nvml_.Read();
  last.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::lock_guard lock(mutex_);
  readings_.push_back(std::move(last));
  return Summarize(readings_);
}

}  // namespace perfwarden::telemetry
