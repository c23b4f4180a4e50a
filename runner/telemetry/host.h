// SPDX-License-Identifier: Apache-2.0
// The host fingerprint a run is recorded with: CPU model, cores, frequency policy, kernel, OS,
// memory. Only properties that stay put between runs on the same machine belong here (a changed
// fingerprint starts a new series), so there is no current clock, load or free memory.
// Everything is read from /proc and /sys under an injectable root, so tests use a fake tree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace perfwarden::telemetry {

struct HostFingerprint {
  std::string cpu_model;          // "model name" (x86); "Hardware" or implementer/part on ARM
  int logical_cores = 0;          // online CPUs
  int physical_cores = 0;         // distinct (package, core) pairs; 0 when not derivable
  std::int64_t cpu_max_mhz = 0;   // cpu0's cpuinfo_max_freq; 0 when cpufreq is absent (VMs)
  std::string governor;           // cpu0's scaling_governor, "" when absent
  std::string turbo;              // "on", "off" or "unknown"
  std::string kernel;             // uname -r
  std::string os;                 // PRETTY_NAME from os-release
  std::int64_t memory_bytes = 0;  // MemTotal
  std::string hostname;
  // Filled by the caller from Google Benchmark's context ("library_build_type": "release"), or
  // from what it knows of the build; empty when unknown.
  std::string compiler;
  std::string library_build_type;

  bool operator==(const HostFingerprint&) const = default;
};

// Reads the fingerprint. With root "/" the kernel release, host name and core count come from
// uname(2), gethostname(2) and sysconf(3); under any other root from the files the kernel shows
// the same values in (proc/sys/kernel/osrelease, proc/sys/kernel/hostname, the processors of
// proc/cpuinfo). Anything unreadable is left empty or 0; capturing never fails.
HostFingerprint CaptureHost(const std::filesystem::path& root = "/");

// A JSON object with snake_case keys; empty strings and zero counts are left out.
std::string ToJson(const HostFingerprint& host);

}  // namespace perfwarden::telemetry
