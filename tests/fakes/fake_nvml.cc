// SPDX-License-Identifier: Apache-2.0
// A stand-in for NVIDIA's libnvidia-ml.so that the tests build: the NVML functions perfwarden
// calls (runner/telemetry/nvml.cc), answering from a script named by $FAKE_NVML_SCRIPT, so the
// telemetry code is tested on machines without a GPU. The script is lines of "key values...":
//
//   count 2                      GPUs
//   name NVIDIA H100 80GB HBM3   driver 550.54.15   cuda 12040   cc 9 0
//   memory_total 85899345920     app_clocks 1980 2619   power_limit_mw 700000
//   mig 0   persistence 1
//   sample UTIL MEM_UTIL MEM_USED POWER_MW SM_MHZ MEM_MHZ TEMP_C THROTTLE_MASK ECC
//
// Readings: every call of nvmlDeviceGetUtilizationRates on GPU 0 moves to the next sample (the
// last one repeats); every GPU reads the current sample. $FAKE_NVML_INIT_ERROR makes
// nvmlInit_v2 fail with that code. Unsupported fields: "-" in a sample.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Sample {
  long long v[9];  // -1: not supported
};

struct Script {
  unsigned count = 1;
  std::string name = "Fake GPU", driver = "1.0";
  int cuda = 12000, cc_major = 8, cc_minor = 0;
  unsigned long long memory_total = 0;
  long long app_sm = -1, app_mem = -1, power_limit = -1, mig = -1, persistence = -1;
  std::vector<Sample> samples;
  std::size_t tick = 0;
  bool started = false;
};

std::mutex g_mutex;
Script g_script;

void Load() {
  g_script = Script{};
  const char* path = std::getenv("FAKE_NVML_SCRIPT");
  if (path == nullptr) return;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "count") words >> g_script.count;
    if (key == "name") {
      std::getline(words >> std::ws, g_script.name);
    }
    if (key == "driver") words >> g_script.driver;
    if (key == "cuda") words >> g_script.cuda;
    if (key == "cc") words >> g_script.cc_major >> g_script.cc_minor;
    if (key == "memory_total") words >> g_script.memory_total;
    if (key == "app_clocks") words >> g_script.app_sm >> g_script.app_mem;
    if (key == "power_limit_mw") words >> g_script.power_limit;
    if (key == "mig") words >> g_script.mig;
    if (key == "persistence") words >> g_script.persistence;
    if (key == "sample") {
      Sample s{};
      for (long long& v : s.v) {
        std::string word;
        words >> word;
        v = word.empty() || word == "-" ? -1 : std::stoll(word);
      }
      g_script.samples.push_back(s);
    }
  }
}

const Sample* Current() {
  if (g_script.samples.empty()) return nullptr;
  const std::size_t i = g_script.tick == 0 ? 0 : g_script.tick - 1;
  return &g_script.samples[std::min(i, g_script.samples.size() - 1)];
}

constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;
constexpr int kInvalidArgument = 2;
constexpr int kUninitialized = 1;

// The device handle is its index + 1.
long long Index(void* device) { return reinterpret_cast<long long>(device) - 1; }

int Field(void* device, int field, unsigned* out) {
  std::lock_guard lock(g_mutex);
  if (!g_script.started) return kUninitialized;
  if (Index(device) < 0 || Index(device) >= static_cast<long long>(g_script.count)) {
    return kInvalidArgument;
  }
  const Sample* s = Current();
  if (s == nullptr || s->v[field] < 0) return kNotSupported;
  *out = static_cast<unsigned>(s->v[field]);
  return kSuccess;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  std::lock_guard lock(g_mutex);
  if (const char* e = std::getenv("FAKE_NVML_INIT_ERROR")) return std::atoi(e);
  Load();
  g_script.started = true;
  return kSuccess;
}

int nvmlShutdown() {
  std::lock_guard lock(g_mutex);
  g_script.started = false;
  return kSuccess;
}

const char* nvmlErrorString(int code) {
  return code == 9 ? "Driver Not Loaded" : code == 3 ? "Not Supported" : "Unknown Error";
}

int nvmlSystemGetDriverVersion(char* out, unsigned length) {
  std::lock_guard lock(g_mutex);
  std::strncpy(out, g_script.driver.c_str(), length);
  return kSuccess;
}

int nvmlSystemGetCudaDriverVersion_v2(int* out) {
  std::lock_guard lock(g_mutex);
  *out = g_script.cuda;
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned* out) {
  std::lock_guard lock(g_mutex);
  *out = g_script.count;
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  std::lock_guard lock(g_mutex);
  if (index >= g_script.count) return kInvalidArgument;
  *device = reinterpret_cast<void*>(static_cast<long long>(index) + 1);
  return kSuccess;
}

int nvmlDeviceGetName(void*, char* out, unsigned length) {
  std::lock_guard lock(g_mutex);
  std::strncpy(out, g_script.name.c_str(), length);
  return kSuccess;
}

struct Memory {
  unsigned long long total, free, used;
};
int nvmlDeviceGetMemoryInfo(void* device, Memory* out) {
  unsigned used = 0;
  const int r = Field(device, 2, &used);
  std::lock_guard lock(g_mutex);
  out->total = g_script.memory_total;
  const Sample* s = Current();
  out->used = r == kSuccess && s != nullptr ? static_cast<unsigned long long>(s->v[2]) : 0;
  out->free = out->total > out->used ? out->total - out->used : 0;
  return kSuccess;
}

struct Utilization {
  unsigned gpu, memory;
};
int nvmlDeviceGetUtilizationRates(void* device, Utilization* out) {
  {
    std::lock_guard lock(g_mutex);
    if (Index(device) == 0) ++g_script.tick;
  }
  if (const int r = Field(device, 0, &out->gpu); r != kSuccess) return r;
  return Field(device, 1, &out->memory);
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* out) { return Field(device, 3, out); }

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* out) {
  return Field(device, type == 1 ? 4 : 5, out);
}

int nvmlDeviceGetTemperature(void* device, int, unsigned* out) { return Field(device, 6, out); }

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* out) {
  unsigned mask = 0;
  const int r = Field(device, 7, &mask);
  *out = mask;
  return r;
}

int nvmlDeviceGetTotalEccErrors(void* device, int, int, unsigned long long* out) {
  unsigned count = 0;
  const int r = Field(device, 8, &count);
  *out = count;
  return r;
}

int nvmlDeviceGetCudaComputeCapability(void*, int* major, int* minor) {
  std::lock_guard lock(g_mutex);
  *major = g_script.cc_major;
  *minor = g_script.cc_minor;
  return kSuccess;
}

int nvmlDeviceGetApplicationsClock(void*, int type, unsigned* out) {
  std::lock_guard lock(g_mutex);
  const long long v = type == 1 ? g_script.app_sm : g_script.app_mem;
  if (v < 0) return kNotSupported;
  *out = static_cast<unsigned>(v);
  return kSuccess;
}

int nvmlDeviceGetPowerManagementLimit(void*, unsigned* out) {
  std::lock_guard lock(g_mutex);
  if (g_script.power_limit < 0) return kNotSupported;
  *out = static_cast<unsigned>(g_script.power_limit);
  return kSuccess;
}

int nvmlDeviceGetMigMode(void*, unsigned* current, unsigned* pending) {
  std::lock_guard lock(g_mutex);
  if (g_script.mig < 0) return kNotSupported;
  *current = *pending = static_cast<unsigned>(g_script.mig);
  return kSuccess;
}

int nvmlDeviceGetPersistenceMode(void*, int* out) {
  std::lock_guard lock(g_mutex);
  if (g_script.persistence < 0) return kNotSupported;
  *out = static_cast<int>(g_script.persistence);
  return kSuccess;
}

}  // extern "C"
