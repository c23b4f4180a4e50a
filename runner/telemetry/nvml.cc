// SPDX-License-Identifier: Apache-2.0
#include "runner/telemetry/nvml.h"

#include <dlfcn.h>

#include <cstdlib>

namespace perfwarden::telemetry {
namespace {

// NVML's C ABI (nvml.h): what perfwarden calls, nothing more.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;
constexpr int kMemoryErrorUncorrected = 1;
constexpr int kVolatileEcc = 0;

struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned int gpu, memory;
};

template <typename F>
F Symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*cuda_driver_version)(int*) = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*app_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*compute_capability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*persistence)(nvmlDevice_t, int*) = nullptr;
};

std::string ThrottleReasonNames(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {kThrottleGpuIdle, "gpu_idle"},
      {kThrottleApplicationsClocks, "applications_clocks_setting"},
      {kThrottleSwPowerCap, "sw_power_cap"},
      {kThrottleHwSlowdown, "hw_slowdown"},
      {kThrottleSyncBoost, "sync_boost"},
      {kThrottleSwThermal, "sw_thermal_slowdown"},
      {kThrottleHwThermal, "hw_thermal_slowdown"},
      {kThrottleHwPowerBrake, "hw_power_brake_slowdown"},
      {kThrottleDisplayClocks, "display_clock_setting"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((mask & bit) != 0) out += (out.empty() ? "" : ",") + std::string(name);
  }
  return out;
}

Result<std::unique_ptr<Nvml>> Nvml::Load(const std::string& library) {
  std::string path = library;
  if (path.empty()) {
    const char* env = std::getenv("PERFWARDEN_NVML_LIBRARY");
    path = env != nullptr && *env != '\0' ? env : "libnvidia-ml.so.1";
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return MakeError(ErrorCode::kUnavailable,
                     "NVML not loaded (" + std::string(why != nullptr ? why : path) + ")");
  }
  std::unique_ptr<Nvml> nvml(new Nvml());
  nvml->handle_ = handle;
  nvml->api_ = std::make_unique<Api>();
  Api& a = *nvml->api_;
  using R = nvmlReturn_t;
  a.init = Symbol<R (*)()>(handle, "nvmlInit_v2");
  a.shutdown = Symbol<R (*)()>(handle, "nvmlShutdown");
  a.error_string = Symbol<const char* (*)(R)>(handle, "nvmlErrorString");
  a.driver_version = Symbol<R (*)(char*, unsigned)>(handle, "nvmlSystemGetDriverVersion");
  a.cuda_driver_version = Symbol<R (*)(int*)>(handle, "nvmlSystemGetCudaDriverVersion_v2");
  a.count = Symbol<R (*)(unsigned*)>(handle, "nvmlDeviceGetCount_v2");
  a.handle_by_index =
      Symbol<R (*)(unsigned, nvmlDevice_t*)>(handle, "nvmlDeviceGetHandleByIndex_v2");
  a.name = Symbol<R (*)(nvmlDevice_t, char*, unsigned)>(handle, "nvmlDeviceGetName");
  a.memory = Symbol<R (*)(nvmlDevice_t, NvmlMemory*)>(handle, "nvmlDeviceGetMemoryInfo");
  a.utilization =
      Symbol<R (*)(nvmlDevice_t, NvmlUtilization*)>(handle, "nvmlDeviceGetUtilizationRates");
  a.power = Symbol<R (*)(nvmlDevice_t, unsigned*)>(handle, "nvmlDeviceGetPowerUsage");
  a.clock = Symbol<R (*)(nvmlDevice_t, int, unsigned*)>(handle, "nvmlDeviceGetClockInfo");
  a.app_clock =
      Symbol<R (*)(nvmlDevice_t, int, unsigned*)>(handle, "nvmlDeviceGetApplicationsClock");
  a.temperature = Symbol<R (*)(nvmlDevice_t, int, unsigned*)>(handle, "nvmlDeviceGetTemperature");
  // Renamed "clocks event reasons" in CUDA 12; drivers export both names.
  a.throttle = Symbol<R (*)(nvmlDevice_t, unsigned long long*)>(
      handle, "nvmlDeviceGetCurrentClocksEventReasons");
  if (a.throttle == nullptr) {
    a.throttle = Symbol<R (*)(nvmlDevice_t, unsigned long long*)>(
        handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  a.ecc = Symbol<R (*)(nvmlDevice_t, int, int, unsigned long long*)>(handle,
                                                                     "nvmlDeviceGetTotalEccErrors");
  a.compute_capability =
      Symbol<R (*)(nvmlDevice_t, int*, int*)>(handle, "nvmlDeviceGetCudaComputeCapability");
  a.power_limit =
      Symbol<R (*)(nvmlDevice_t, unsigned*)>(handle, "nvmlDeviceGetPowerManagementLimit");
  a.mig_mode = Symbol<R (*)(nvmlDevice_t, unsigned*, unsigned*)>(handle, "nvmlDeviceGetMigMode");
  a.persistence = Symbol<R (*)(nvmlDevice_t, int*)>(handle, "nvmlDeviceGetPersistenceMode");
  if (a.init == nullptr || a.count == nullptr || a.handle_by_index == nullptr) {
    return MakeError(ErrorCode::kUnavailable,
                     path + " is not NVML (it lacks nvmlInit_v2 or nvmlDeviceGetCount_v2)");
  }
  if (const R r = a.init(); r != kSuccess) {
    nvml->api_->shutdown = nullptr;  // not initialised: nothing to shut down
    return MakeError(ErrorCode::kUnavailable,
                     std::string("NVML did not start: ") +
                         (a.error_string != nullptr ? a.error_string(r) : "error") + " (" +
                         std::to_string(r) + ")");
  }
  unsigned count = 0;
  if (a.count(&count) != kSuccess || count == 0) {
    return MakeError(ErrorCode::kUnavailable, "NVML sees no GPU");
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (a.handle_by_index(i, &device) == kSuccess) nvml->devices_.push_back(device);
  }
  return nvml;
}

Nvml::~Nvml() {
  if (api_ && api_->shutdown != nullptr) api_->shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

GpuFingerprint Nvml::Fingerprint() const {
  const Api& a = *api_;
  GpuFingerprint f;
  char text[96] = {};
  if (a.driver_version != nullptr && a.driver_version(text, sizeof text - 1) == kSuccess) {
    f.driver_version = text;
  }
  int cuda = 0;
  if (a.cuda_driver_version != nullptr && a.cuda_driver_version(&cuda) == kSuccess) {
    f.cuda_driver_version = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
  }
  for (nvmlDevice_t d : devices_) {
    GpuInfo g;
    char name[96] = {};
    if (a.name != nullptr && a.name(d, name, sizeof name - 1) == kSuccess) g.name = name;
    NvmlMemory memory{};
    if (a.memory != nullptr && a.memory(d, &memory) == kSuccess) {
      g.memory_bytes = static_cast<std::int64_t>(memory.total);
    }
    int major = 0, minor = 0;
    if (a.compute_capability != nullptr && a.compute_capability(d, &major, &minor) == kSuccess) {
      g.compute_capability = std::to_string(major) + "." + std::to_string(minor);
    }
    unsigned value = 0;
    if (a.app_clock != nullptr && a.app_clock(d, kClockSm, &value) == kSuccess) {
      g.app_sm_clock_mhz = static_cast<int>(value);
    }
    if (a.app_clock != nullptr && a.app_clock(d, kClockMem, &value) == kSuccess) {
      g.app_memory_clock_mhz = static_cast<int>(value);
    }
    if (a.power_limit != nullptr && a.power_limit(d, &value) == kSuccess) {
      g.power_limit_w = static_cast<int>(value / 1000);
    }
    unsigned current = 0, pending = 0;
    if (a.mig_mode != nullptr && a.mig_mode(d, &current, &pending) == kSuccess) {
      g.mig_mode = current != 0 ? "enabled" : "disabled";
    }
    int persistence = 0;
    if (a.persistence != nullptr && a.persistence(d, &persistence) == kSuccess) {
      g.persistence = persistence != 0 ? "enabled" : "disabled";
    }
    f.gpus.push_back(std::move(g));
  }
  return f;
}

std::vector<GpuReading> Nvml::Read() const {
  const Api& a = *api_;
  std::vector<GpuReading> out;
  out.reserve(devices_.size());
  for (nvmlDevice_t d : devices_) {
    GpuReading r;
    NvmlUtilization u{};
    if (a.utilization != nullptr && a.utilization(d, &u) == kSuccess) {
      r.utilization = u.gpu;
      r.memory_utilization = u.memory;
    }
    NvmlMemory memory{};
    if (a.memory != nullptr && a.memory(d, &memory) == kSuccess) {
      r.memory_used_bytes = static_cast<double>(memory.used);
    }
    unsigned value = 0;
    if (a.power != nullptr && a.power(d, &value) == kSuccess) r.power_w = value / 1000.0;
    if (a.clock != nullptr && a.clock(d, kClockSm, &value) == kSuccess) r.sm_clock_mhz = value;
    if (a.clock != nullptr && a.clock(d, kClockMem, &value) == kSuccess) {
      r.memory_clock_mhz = value;
    }
    if (a.temperature != nullptr && a.temperature(d, kTemperatureGpu, &value) == kSuccess) {
      r.temperature_c = value;
    }
    unsigned long long mask = 0;
    if (a.throttle != nullptr && a.throttle(d, &mask) == kSuccess) r.throttle_reasons = mask;
    unsigned long long ecc = 0;
    if (a.ecc != nullptr && a.ecc(d, kMemoryErrorUncorrected, kVolatileEcc, &ecc) == kSuccess) {
      r.ecc_uncorrected = static_cast<double>(ecc);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace perfwarden::telemetry
