// SPDX-License-Identifier: Apache-2.0
// NVIDIA's management library (NVML), loaded at run time with dlopen: perfwarden builds and runs
// without any NVIDIA library, and on a GPU host reads what the GPUs are (the fingerprint that
// keeps a driver upgrade from looking like a code regression) and what they do (utilisation,
// memory, power, clocks, temperature, throttle reasons, ECC errors) while a benchmark runs.
// Only the few NVML functions used are declared here, with NVML's C ABI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::telemetry {

// What a GPU is: settings that stay put between runs (a change starts a new series).
struct GpuInfo {
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::int64_t memory_bytes = 0;   // total
  std::string compute_capability;  // "9.0"
  int app_sm_clock_mhz = 0;        // applications clocks; 0 when not reported
  int app_memory_clock_mhz = 0;
  int power_limit_w = 0;    // power management limit
  std::string mig_mode;     // "enabled", "disabled", "" when not supported
  std::string persistence;  // "enabled", "disabled", ""

  bool operator==(const GpuInfo&) const = default;
};

struct GpuFingerprint {
  std::string driver_version;       // "550.54.15"
  std::string cuda_driver_version;  // "12.4"
  std::vector<GpuInfo> gpus;        // by NVML index

  bool operator==(const GpuFingerprint&) const = default;
};

// NVML's clock event ("throttle") reasons, as its bit mask.
enum ThrottleReason : std::uint64_t {
  kThrottleGpuIdle = 0x1,
  kThrottleApplicationsClocks = 0x2,
  kThrottleSwPowerCap = 0x4,
  kThrottleHwSlowdown = 0x8,
  kThrottleSyncBoost = 0x10,
  kThrottleSwThermal = 0x20,
  kThrottleHwThermal = 0x40,
  kThrottleHwPowerBrake = 0x80,
  kThrottleDisplayClocks = 0x100,
};
// The reasons in the mask that slow a busy GPU down (power and thermal caps, hardware
// slowdowns); idle, application-clock and display settings are not.
constexpr std::uint64_t kThrottlePower = kThrottleSwPowerCap | kThrottleHwPowerBrake;
constexpr std::uint64_t kThrottleThermal = kThrottleSwThermal | kThrottleHwThermal;
constexpr std::uint64_t kThrottleSlowing = kThrottlePower | kThrottleThermal | kThrottleHwSlowdown;
// "sw_power_cap,hw_thermal_slowdown" for a mask.
std::string ThrottleReasonNames(std::uint64_t mask);

// One reading of one GPU. Fields the GPU does not report are -1.
struct GpuReading {
  double utilization = -1;         // % of time a kernel ran
  double memory_utilization = -1;  // % of time memory was read or written
  double memory_used_bytes = -1;
  double power_w = -1;
  double sm_clock_mhz = -1;
  double memory_clock_mhz = -1;
  double temperature_c = -1;
  std::uint64_t throttle_reasons = 0;
  double ecc_uncorrected = -1;  // volatile count since the driver loaded
};

class Nvml {
 public:
  // Loads `library` (default: $PERFWARDEN_NVML_LIBRARY, else libnvidia-ml.so.1) and initialises
  // NVML. kUnavailable with the reason (no library, no driver, no GPU) when it cannot.
  static Result<std::unique_ptr<Nvml>> Load(const std::string& library = "");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  GpuFingerprint Fingerprint() const;
  // One reading per GPU, in index order. Thread-safe (NVML is).
  std::vector<GpuReading> Read() const;
  std::size_t device_count() const { return devices_.size(); }

  struct Api;  // the resolved functions (nvml.cc)

 private:
  Nvml() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::vector<void*> devices_;  // nvmlDevice_t
};

}  // namespace perfwarden::telemetry
