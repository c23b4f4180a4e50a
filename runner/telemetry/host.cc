// SPDX-License-Identifier: Apache-2.0
#include "runner/telemetry/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/text.h"

namespace perfwarden::telemetry {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadFile(const fs::path& root, std::string_view relative) {
  std::ifstream in(root / relative, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line of a one-value sysfs/procfs file, trimmed.
std::string ReadValue(const fs::path& root, std::string_view relative) {
  const std::optional<std::string> text = ReadFile(root, relative);
  if (!text) return {};
  return std::string(Trim(std::string_view(*text).substr(0, text->find('\n'))));
}

std::optional<std::int64_t> ToInteger(std::string_view text) {
  text = Trim(text);
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc()) return std::nullopt;
  return value;
}

// /proc/cpuinfo as blocks (one per logical CPU) of "key : value" pairs.
using CpuInfoBlock = std::map<std::string, std::string, std::less<>>;

std::vector<CpuInfoBlock> ParseCpuInfo(const std::string& text) {
  std::vector<CpuInfoBlock> blocks(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (Trim(line).empty() && !blocks.back().empty()) blocks.emplace_back();
      continue;
    }
    const std::string key(Trim(std::string_view(line).substr(0, colon)));
    blocks.back().emplace(key, std::string(Trim(std::string_view(line).substr(colon + 1))));
  }
  if (blocks.back().empty()) blocks.pop_back();
  return blocks;
}

std::string Find(const std::vector<CpuInfoBlock>& blocks, std::string_view key) {
  for (const CpuInfoBlock& block : blocks) {
    if (auto it = block.find(key); it != block.end() && !it->second.empty()) return it->second;
  }
  return {};
}

// arm64 kernels print no model name, only the MIDR fields; name the common server cores
// (Linux arch/arm64/include/asm/cputype.h) so that a fingerprint is readable.
std::string ArmCpuName(const std::string& implementer, const std::string& part) {
  static const std::map<std::string, std::string> kImplementers = {
      {"0x41", "ARM"},      {"0x42", "Broadcom"}, {"0x48", "HiSilicon"}, {"0x4e", "NVIDIA"},
      {"0x51", "Qualcomm"}, {"0x61", "Apple"},    {"0xc0", "Ampere"}};
  static const std::map<std::string, std::string> kArmParts = {
      {"0xd03", "Cortex-A53"},  {"0xd07", "Cortex-A57"},  {"0xd08", "Cortex-A72"},
      {"0xd0b", "Cortex-A76"},  {"0xd0c", "Neoverse-N1"}, {"0xd40", "Neoverse-V1"},
      {"0xd49", "Neoverse-N2"}, {"0xd4f", "Neoverse-V2"}};
  const auto vendor = kImplementers.find(implementer);
  const std::string vendor_name =
      vendor != kImplementers.end() ? vendor->second : "implementer " + implementer;
  if (implementer == "0x41") {
    if (auto known = kArmParts.find(part); known != kArmParts.end()) {
      return "ARM " + known->second;
    }
  }
  return vendor_name + " part " + part;
}

std::string CpuModel(const std::vector<CpuInfoBlock>& blocks) {
  if (std::string model = Find(blocks, "model name"); !model.empty()) return model;
  if (std::string hardware = Find(blocks, "Hardware"); !hardware.empty()) return hardware;
  const std::string part = Find(blocks, "CPU part");
  if (part.empty()) return {};
  return ArmCpuName(Find(blocks, "CPU implementer"), part);
}

// One physical core per distinct set of hardware-thread siblings (sysfs); else per distinct
// (physical id, core id) of /proc/cpuinfo (x86 kernels without topology in sysfs, some VMs).
int PhysicalCores(const fs::path& root, const std::vector<CpuInfoBlock>& blocks) {
  std::set<std::string> cores;
  std::error_code ec;
  for (fs::directory_iterator it(root / "sys/devices/system/cpu", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 4 || !name.starts_with("cpu") ||
        name.find_first_not_of("0123456789", 3) != std::string::npos) {
      continue;
    }
    const std::string topology = "sys/devices/system/cpu/" + name + "/topology/";
    std::string siblings = ReadValue(root, topology + "core_cpus_list");
    if (siblings.empty()) siblings = ReadValue(root, topology + "thread_siblings_list");
    if (!siblings.empty()) cores.insert(siblings);
  }
  if (!cores.empty()) return static_cast<int>(cores.size());
  for (const CpuInfoBlock& block : blocks) {
    const auto package = block.find("physical id");
    const auto core = block.find("core id");
    if (package == block.end() || core == block.end()) return 0;
    cores.insert(package->second + "/" + core->second);
  }
  return static_cast<int>(cores.size());
}

std::string Turbo(const fs::path& root) {
  // intel_pstate says whether turbo is *disabled*; acpi-cpufreq and amd-pstate whether boost is
  // enabled (globally, or per policy on newer kernels).
  const std::string no_turbo = ReadValue(root, "sys/devices/system/cpu/intel_pstate/no_turbo");
  if (no_turbo == "0") return "on";
  if (no_turbo == "1") return "off";
  for (std::string_view path :
       {"sys/devices/system/cpu/cpufreq/boost", "sys/devices/system/cpu/cpu0/cpufreq/boost"}) {
    const std::string boost = ReadValue(root, path);
    if (boost == "1") return "on";
    if (boost == "0") return "off";
  }
  return "unknown";
}

std::string OsName(const fs::path& root) {
  std::optional<std::string> text = ReadFile(root, "etc/os-release");
  if (!text) text = ReadFile(root, "usr/lib/os-release");
  if (!text) return {};
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("PRETTY_NAME=")) continue;
    std::string_view value = Trim(std::string_view(line).substr(12));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    std::string out;  // os-release allows shell-style backslash escapes inside quotes
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i] == '\\' && i + 1 < value.size()) ++i;
      out += value[i];
    }
    return out;
  }
  return {};
}

std::int64_t MemoryBytes(const fs::path& root) {
  const std::optional<std::string> text = ReadFile(root, "proc/meminfo");
  if (!text) return 0;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("MemTotal:")) continue;
    const std::optional<std::int64_t> kib =
        ToInteger(std::string_view(line).substr(9, line.find("kB") - 9));
    return kib ? *kib * 1024 : 0;
  }
  return 0;
}

bool IsRealRoot(const fs::path& root) { return root.lexically_normal() == fs::path("/"); }

}  // namespace

HostFingerprint CaptureHost(const std::filesystem::path& root) {
  HostFingerprint host;
  const std::vector<CpuInfoBlock> cpuinfo =
      ParseCpuInfo(ReadFile(root, "proc/cpuinfo").value_or(""));
  host.cpu_model = CpuModel(cpuinfo);
  host.physical_cores = PhysicalCores(root, cpuinfo);
  const std::optional<std::int64_t> khz =
      ToInteger(ReadValue(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"));
  host.cpu_max_mhz = khz ? *khz / 1000 : 0;
  host.governor = ReadValue(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  host.turbo = Turbo(root);
  host.os = OsName(root);
  host.memory_bytes = MemoryBytes(root);
  if (IsRealRoot(root)) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    host.logical_cores = online > 0 ? static_cast<int>(online)
                                    : static_cast<int>(std::thread::hardware_concurrency());
    utsname names{};
    if (uname(&names) == 0) host.kernel = names.release;
    std::array<char, 256> name{};
    if (gethostname(name.data(), name.size() - 1) == 0) host.hostname = name.data();
  } else {
    for (const CpuInfoBlock& block : cpuinfo) host.logical_cores += block.contains("processor");
    host.kernel = ReadValue(root, "proc/sys/kernel/osrelease");
    host.hostname = ReadValue(root, "proc/sys/kernel/hostname");
  }
  return host;
}

std::string ToJson(const HostFingerprint& host) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  const auto text = [&](const char* key, const std::string& value) {
    if (!value.empty()) json[key] = value;
  };
  const auto count = [&](const char* key, std::int64_t value) {
    if (value != 0) json[key] = value;
  };
  text("cpu_model", host.cpu_model);
  count("logical_cores", host.logical_cores);
  count("physical_cores", host.physical_cores);
  count("cpu_max_mhz", host.cpu_max_mhz);
  text("governor", host.governor);
  text("turbo", host.turbo);
  text("kernel", host.kernel);
  text("os", host.os);
  count("memory_bytes", host.memory_bytes);
  text("hostname", host.hostname);
  text("compiler", host.compiler);
  text("library_build_type", host.library_build_type);
  // Replace, not throw, on bytes that are not UTF-8: a fingerprint must never stop a run.
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace perfwarden::telemetry
