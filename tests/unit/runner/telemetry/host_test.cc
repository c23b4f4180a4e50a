// SPDX-License-Identifier: Apache-2.0
// Host fingerprint: each field read from a fake /proc + /sys tree (x86 with SMT, arm64, a board
// with "Hardware", an empty tree), the JSON it becomes, and a sanity check on this machine.
#include "runner/telemetry/host.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace perfwarden::telemetry {
namespace {

namespace fs = std::filesystem;

// A fake root directory, removed with everything in it.
class FakeRoot {
 public:
  FakeRoot() {
    std::string pattern = (fs::temp_directory_path() / "host_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~FakeRoot() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

  void Write(const std::string& relative, const std::string& text) const {
    const fs::path file = path_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  }

 private:
  fs::path path_;
};

// An x86 processor block as Linux prints it (trimmed to the keys that matter plus noise).
std::string X86Processor(int processor, int core) {
  return "processor\t: " + std::to_string(processor) +
         "\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 106\n"
         "model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz\n"
         "cpu MHz\t\t: 3499.998\nphysical id\t: 0\nsiblings\t: 4\ncore id\t\t: " +
         std::to_string(core) + "\ncpu cores\t: 2\nflags\t\t: fpu vme de pse tsc msr\n\n";
}

TEST(Host, ReadsAnX86TreeWithSmt) {
  FakeRoot root;
  root.Write("proc/cpuinfo",
             X86Processor(0, 0) + X86Processor(1, 1) + X86Processor(2, 0) + X86Processor(3, 1));
  root.Write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
  root.Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  root.Write("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
  root.Write("sys/devices/system/cpu/cpufreq/boost", "1\n");  // intel_pstate wins
  root.Write("etc/os-release",
             "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n"
             "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n");
  root.Write("proc/meminfo",
             "MemTotal:       16303032 kB\nMemFree:         9203332 kB\nMemAvailable:   "
             "14302252 kB\n");
  root.Write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
  root.Write("proc/sys/kernel/hostname", "bench-1\n");

  const HostFingerprint host = CaptureHost(root.path());
  EXPECT_EQ(host.cpu_model, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz");
  EXPECT_EQ(host.logical_cores, 4);
  EXPECT_EQ(host.physical_cores, 2);  // (physical id, core id) pairs: no sysfs topology here
  EXPECT_EQ(host.cpu_max_mhz, 3500);
  EXPECT_EQ(host.governor, "performance");
  EXPECT_EQ(host.turbo, "off");
  EXPECT_EQ(host.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(host.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(host.memory_bytes, 16303032LL * 1024);
  EXPECT_EQ(host.hostname, "bench-1");
  EXPECT_EQ(
      ToJson(host),
      R"json({"cpu_model":"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz","logical_cores":4,)json"
      R"json("physical_cores":2,"cpu_max_mhz":3500,"governor":"performance","turbo":"off",)json"
      R"json("kernel":"6.1.0-18-amd64","os":"Debian GNU/Linux 12 (bookworm)",)json"
      R"json("memory_bytes":16694304768,"hostname":"bench-1"})json");
}

TEST(Host, ReadsAnArm64Tree) {
  FakeRoot root;
  // arm64 /proc/cpuinfo (AWS Graviton2): no "model name", only the MIDR fields.
  std::string cpuinfo;
  for (int cpu = 0; cpu < 2; ++cpu) {
    cpuinfo += "processor\t: " + std::to_string(cpu) +
               "\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"
               "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
               "CPU part\t: 0xd0c\nCPU revision\t: 1\n\n";
    root.Write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/core_cpus_list",
               std::to_string(cpu) + "\n");
  }
  root.Write("proc/cpuinfo", cpuinfo);
  root.Write("usr/lib/os-release", "PRETTY_NAME='Amazon Linux 2023.4.20240401'\n");
  root.Write("proc/meminfo", "MemTotal:        3903592 kB\n");

  const HostFingerprint host = CaptureHost(root.path());
  EXPECT_EQ(host.cpu_model, "ARM Neoverse-N1");
  EXPECT_EQ(host.logical_cores, 2);
  EXPECT_EQ(host.physical_cores, 2);
  EXPECT_EQ(host.cpu_max_mhz, 0);  // no cpufreq, as in most VMs
  EXPECT_EQ(host.governor, "");
  EXPECT_EQ(host.turbo, "unknown");
  EXPECT_EQ(host.os, "Amazon Linux 2023.4.20240401");
  EXPECT_EQ(host.memory_bytes, 3903592LL * 1024);
  const nlohmann::json json = nlohmann::json::parse(ToJson(host));
  EXPECT_FALSE(json.contains("governor"));
  EXPECT_FALSE(json.contains("cpu_max_mhz"));
  EXPECT_FALSE(json.contains("kernel"));
  EXPECT_EQ(json.at("turbo"), "unknown");
}

TEST(Host, SysfsSiblingsCountPhysicalCoresAndBoostGivesTurbo) {
  FakeRoot root;
  root.Write("proc/cpuinfo",
             "processor\t: 0\nHardware\t: BCM2835\n\nprocessor\t: 1\n\nprocessor\t: 2\n\n"
             "processor\t: 3\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n");
  // Two cores with two threads each; thread_siblings_list on kernels without core_cpus_list.
  const std::map<int, std::string> siblings = {{0, "0,2"}, {1, "1,3"}, {2, "0,2"}, {3, "1,3"}};
  for (const auto& [cpu, list] : siblings) {
    root.Write(
        "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list",
        list + "\n");
  }
  root.Write("sys/devices/system/cpu/cpufreq/boost", "0\n");
  root.Write("sys/devices/system/cpu/cpuidle/current_driver", "none\n");  // not a cpuN directory

  HostFingerprint host = CaptureHost(root.path());
  EXPECT_EQ(host.cpu_model, "BCM2835");  // "Hardware" comes before the MIDR fields
  EXPECT_EQ(host.logical_cores, 4);
  EXPECT_EQ(host.physical_cores, 2);
  EXPECT_EQ(host.turbo, "off");

  root.Write("sys/devices/system/cpu/cpufreq/boost", "1\n");
  EXPECT_EQ(CaptureHost(root.path()).turbo, "on");
  root.Write("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
  EXPECT_EQ(CaptureHost(root.path()).turbo, "on");
}

TEST(Host, UnknownArmPartIsNamedByItsIds) {
  FakeRoot root;
  root.Write("proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0xc0\nCPU part\t: 0xac3\n");
  EXPECT_EQ(CaptureHost(root.path()).cpu_model, "Ampere part 0xac3");
  root.Write("proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x99\nCPU part\t: 0x001\n");
  EXPECT_EQ(CaptureHost(root.path()).cpu_model, "implementer 0x99 part 0x001");
}

TEST(Host, EmptyTreeGivesEmptyFields) {
  FakeRoot root;
  const HostFingerprint host = CaptureHost(root.path() / "absent");
  HostFingerprint expected;
  expected.turbo = "unknown";
  EXPECT_EQ(host, expected);
  EXPECT_EQ(ToJson(host), R"({"turbo":"unknown"})");
}

TEST(Host, JsonCarriesBuildFieldsAndEscapes) {
  HostFingerprint host;
  host.cpu_model = "Weird \"quoted\" CPU\\";
  host.compiler = "GCC 12.2.0";
  host.library_build_type = "release";
  host.os = "bad \xff byte";
  const nlohmann::json json = nlohmann::json::parse(ToJson(host));
  EXPECT_EQ(json.at("cpu_model"), "Weird \"quoted\" CPU\\");
  EXPECT_EQ(json.at("compiler"), "GCC 12.2.0");
  EXPECT_EQ(json.at("library_build_type"), "release");
  EXPECT_EQ(json.at("os"), "bad \xEF\xBF\xBD byte");  // U+FFFD, not an exception
  EXPECT_EQ(json.size(), 4u);
}

std::string FirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(Host, SaneOnThisMachine) {
  const HostFingerprint host = CaptureHost();
  EXPECT_GE(host.logical_cores, 1);
  EXPECT_EQ(host.logical_cores, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_FALSE(host.kernel.empty());
  EXPECT_FALSE(host.hostname.empty());
  EXPECT_TRUE(host.turbo == "on" || host.turbo == "off" || host.turbo == "unknown") << host.turbo;
  EXPECT_LE(host.physical_cores, host.logical_cores);
  // The files the fake-tree path reads show the same values as the system calls.
  if (fs::exists("/proc/sys/kernel/osrelease")) {
    EXPECT_EQ(host.kernel, FirstLine("/proc/sys/kernel/osrelease"));
  }
  if (fs::exists("/proc/sys/kernel/hostname")) {
    EXPECT_EQ(host.hostname, FirstLine("/proc/sys/kernel/hostname"));
  }
  if (fs::exists("/proc/meminfo")) {
    EXPECT_GT(host.memory_bytes, 0);
  }
  // Stable: a second capture is identical (no clocks or load in the fingerprint).
  EXPECT_EQ(CaptureHost(), host);
  EXPECT_TRUE(nlohmann::json::parse(ToJson(host)).is_object());
}

}  // namespace
}  // namespace perfwarden::telemetry
