// SPDX-License-Identifier: Apache-2.0
// The test process's peak resident set (Linux /proc), for tests that log how much memory a
// refused request cost the in-process server. Logged, never asserted: the machines are shared.
#pragma once

#include <fstream>
#include <string>

namespace perfwarden::testing {

// The process's peak resident set in KiB (VmHWM), or -1 where /proc cannot tell.
inline long PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux 4.0+); false where the kernel refuses.
inline bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

}  // namespace perfwarden::testing
