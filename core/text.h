// Small ASCII text helpers shared by the readers of files and environment (Google Benchmark
// JSON, series CSV, /proc files). Header-only; no locale is involved.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace perfgate {

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

}  // namespace perfgate
