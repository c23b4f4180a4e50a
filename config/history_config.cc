// SPDX-License-Identifier: Apache-2.0
#include "config/history_config.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "config/yaml_reader.h"

namespace perfwarden::config {
namespace {

Result<double> ParseFraction(std::string_view text, bool percent_allowed) {
  std::string s(text);
  bool percent = false;
  if (percent_allowed && !s.empty() && s.back() == '%') {
    percent = true;
    s.pop_back();
  }
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(value)) {
    return InvalidArgument("expected a number" +
                           std::string(percent_allowed ? " or a percentage" : "") + ", got " +
                           Quoted(text));
  }
  return percent ? value / 100 : value;
}

bool IsBranchName(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    if (static_cast<unsigned char>(c) <= ' ' || c == ',' || c == '~' || c == '^' || c == ':') {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<void> SetHistoryKey(HistoryConfig& config, std::string_view key, std::string_view text) {
  if (key == "history.enabled") {
    if (text == "true") {
      config.enabled = true;
    } else if (text == "false") {
      config.enabled = false;
    } else {
      return InvalidArgument("expected true or false, got " + Quoted(text));
    }
  } else if (key == "history.branches") {
    std::vector<std::string> branches;
    std::size_t at = 0;
    while (at <= text.size()) {
      const std::size_t comma = std::min(text.find(',', at), text.size());
      std::string_view name = text.substr(at, comma - at);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!IsBranchName(name)) {
        return InvalidArgument("expected branch names separated by commas, got " + Quoted(text));
      }
      branches.emplace_back(name);
      at = comma + 1;
    }
    config.branches = std::move(branches);
  } else if (key == "history.threshold") {
    auto value = ParseFraction(text, true);
    if (!value) return tl::unexpected(value.error());
    if (!(*value > 0 && *value < 10)) {
      return InvalidArgument("must be above 0 (5% or 0.05), got " + Quoted(text));
    }
    config.threshold = *value;
  } else if (key == "history.window") {
    std::size_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end || value < 4 || value > 10000) {
      return InvalidArgument("must be an integer in [4, 10000], got " + Quoted(text));
    }
    config.window = value;
  } else if (key == "history.max_pvalue") {
    auto value = ParseFraction(text, false);
    if (!value) return tl::unexpected(value.error());
    if (!(*value > 0 && *value < 1)) {
      return InvalidArgument("must be in (0, 1), got " + Quoted(text));
    }
    config.max_pvalue = *value;
  } else if (key == "history.webhook_url" || key == "history.public_url") {
    if (!text.empty() && !text.starts_with("http://") && !text.starts_with("https://")) {
      return InvalidArgument("must be an http:// or https:// URL, got " + Quoted(text));
    }
    (key == "history.webhook_url" ? config.webhook_url : config.public_url) = std::string(text);
  } else {
    return MakeError(ErrorCode::kNotFound, "unknown key " + std::string(key), std::string(key));
  }
  return {};
}

}  // namespace perfwarden::config
