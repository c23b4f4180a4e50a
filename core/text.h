// SPDX-License-Identifier: Apache-2.0
// Small ASCII text helpers shared by the readers of files and environment (Google Benchmark
// JSON, series CSV, /proc files) and by the writers of changes ("+8.3%"). Header-only; no locale
// is involved.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace perfwarden {

// `text` without leading and trailing spaces, tabs, CR and LF.
inline std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n\f\v");
  return text.substr(first, last - first + 1);
}

// ASCII lower case (other bytes unchanged).
inline std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A relative change as people read it: 0.0834 -> "+8.3%", -0.05 -> "-5.0%" (one decimal, sign
// always shown). The one spelling of a change in reasons, alerts, bisects and A/B answers.
inline std::string SignedPercent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", fraction * 100);
  return buffer;
}

}  // namespace perfwarden
