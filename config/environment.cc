// SPDX-License-Identifier: Apache-2.0
#include "config/environment.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "config/secret_env.h"

extern char** environ;

namespace perfwarden::config {
namespace {

// Written once by HideCredentials, before any thread, and only read afterwards.
std::map<std::string, std::string, std::less<>>& Hidden() {
  static std::map<std::string, std::string, std::less<>> hidden;
  return hidden;
}

// The environment block the process started with, [start, end): the bytes that
// /proc/<pid>/environ shows (proc(5): fields 50 and 51 of /proc/self/stat); {0, 0} when unknown.
// Strings that setenv made live elsewhere, and glibc keeps track of those.
std::pair<std::uintptr_t, std::uintptr_t> StartingEnvironment() {
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t comm_end = stat.rfind(')');  // the command name may hold spaces
  if (comm_end == std::string::npos) return {0, 0};
  std::istringstream fields(stat.substr(comm_end + 1));
  std::string field;
  std::pair<std::uintptr_t, std::uintptr_t> range{0, 0};
  for (int i = 3; i <= 51 && fields >> field; ++i) {  // field 3 follows the name
    if (i == 50) range.first = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 51) range.second = std::strtoull(field.c_str(), nullptr, 10);
  }
  return range;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    if (const char* value = std::getenv(std::string(name).c_str()); value != nullptr) {
      return std::string(value);
    }
    const auto& hidden = Hidden();
    if (auto it = hidden.find(name); it != hidden.end()) return it->second;
    return std::nullopt;
  };
}

int HideCredentials() {
  std::vector<std::string> names;
  int hidden = 0;
  const auto [start, end] = StartingEnvironment();
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (ClassifyEnv(name) == SecretEnv::kCredential) names.emplace_back(name);
  }
  for (const std::string& name : names) {
    char* value = std::getenv(name.c_str());
    if (value == nullptr) continue;
    Hidden()[name] = value;
    ++hidden;
    // unsetenv only unlinks the entry; the text stays where the process started with it, which
    // /proc/<pid>/environ shows to any process of the same user (a suite's, for one).
    const auto at = reinterpret_cast<std::uintptr_t>(value);
    if (at >= start && at < end) std::memset(value, 0, std::strlen(value));
    unsetenv(name.c_str());
  }
  return hidden;
}

}  // namespace perfwarden::config
