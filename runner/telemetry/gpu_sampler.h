// SPDX-License-Identifier: Apache-2.0
// GPU telemetry while a benchmark runs: NVML read every 100 ms on a thread (GpuSampler), the
// readings summarised per run (Summarize: mean utilisation, peak memory, mean power, energy,
// clocks, temperature, the share of time a power or thermal cap slowed the GPUs, new ECC
// errors), and the summary turned into metrics of the run (GpuSeries) and a verdict on the
// environment (a run the GPUs throttled measures the cooling, not the code).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runner/telemetry/nvml.h"
#include "wire/run_upload.h"

namespace perfwarden::telemetry {

struct TimedReading {
  double t_s = 0;                // since the sampler started
  std::vector<GpuReading> gpus;  // one per GPU
};

struct GpuSummary {
  int samples = 0;
  int gpus = 0;
  double duration_s = 0;
  double utilization_mean = -1;  // %, over samples and GPUs; -1 when not reported
  double memory_utilization_mean = -1;
  double memory_peak_bytes = -1;  // the most any one GPU used
  double power_mean_w = -1;       // sum over GPUs, mean over time
  double energy_j = -1;           // sum over GPUs, trapezoids over time
  double sm_clock_mean_mhz = -1;
  double sm_clock_min_mhz = -1;
  double temperature_max_c = -1;
  double throttled_fraction = 0;  // of samples in which a GPU had a slowing reason
  bool power_throttled = false;
  bool thermal_throttled = false;
  std::uint64_t reasons_seen = 0;  // every slowing reason seen
  double ecc_errors = 0;           // uncorrected, new during the run

  // A throttled run: power or thermal caps slowed the GPUs in more than 1% of the samples.
  bool Throttled() const { return throttled_fraction > 0.01; }
  // "thermal throttling (hw_thermal_slowdown) in 12% of the samples", "" when not throttled.
  std::string ThrottleNote() const;
};

GpuSummary Summarize(const std::vector<TimedReading>& readings);

// The metrics of the run (benchmark `benchmark` of `suite`): gpu_utilization (%),
// gpu_memory_utilization (%), gpu_memory_peak (bytes), gpu_power (W), gpu_energy (J),
// gpu_sm_clock (MHz), gpu_temperature_max (C), gpu_throttled_fraction (ratio), gpu_ecc_errors;
// and samples_per_joule when `samples_per_s` (a training benchmark's metric) is given. Each has
// one value (one run); metrics a GPU does not report are left out.
std::vector<wire::ResultSeries> GpuSeries(const GpuSummary& summary, const std::string& suite,
                                          const std::string& benchmark, double samples_per_s);

// The fingerprint as JSON for the testbed ({"driver", "cuda_driver", "gpus": [...]}).
std::string ToJson(const GpuFingerprint& fingerprint);

class GpuSampler {
 public:
  explicit GpuSampler(const Nvml& nvml,
                      std::chrono::milliseconds period = std::chrono::milliseconds(100));
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  void Start();       // a first reading at once, then one every period
  GpuSummary Stop();  // a last reading, then the summary of this Start..Stop

 private:
  void Loop();

  const Nvml& nvml_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point started_;
  std::mutex mutex_;
  std::vector<TimedReading> readings_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace perfwarden::telemetry
