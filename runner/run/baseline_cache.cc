// SPDX-License-Identifier: Apache-2.0
#include "runner/run/baseline_cache.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "runner/client/sha256.h"
#include "runner/run/process.h"
#include "runner/run/upload.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;
using client::FileSha256;
using client::Sha256;
using nlohmann::json;

constexpr int kManifestFormat = 1;
constexpr char kKeyFormat[] = "perfwarden-baseline-cache/1";
constexpr char kManifest[] = "manifest.json";
constexpr char kTree[] = "tree";
constexpr char kTempPrefix[] = "tmp-";
// A temporary directory this old belongs to a process that died while writing it.
constexpr auto kLeftoverAge = std::chrono::hours(24);

// One path of a tree as the manifest lists it; for a symlink `content` is its target, for a file
// its SHA-256.
struct Record {
  std::string path;  // relative to the tree, '/'-separated
  std::string type;  // "file", "dir", "symlink"
  unsigned mode = 0;
  std::uintmax_t size = 0;
  std::string content;

  bool operator==(const Record&) const = default;
};

json ToJson(const Record& r) {
  json out = {{"path", r.path}, {"type", r.type}};
  if (r.type != "symlink") {
    char mode[16];
    std::snprintf(mode, sizeof(mode), "%04o", r.mode);
    out["mode"] = mode;  // octal, as ls and chmod write it
  }
  if (r.type == "file") out["size"] = r.size;
  if (r.type != "dir") out["content"] = r.content;
  return out;
}

Record FromJson(const json& j) {
  Record r;
  r.path = j.at("path").get<std::string>();
  r.type = j.at("type").get<std::string>();
  r.mode = static_cast<unsigned>(std::strtoul(j.value("mode", "0").c_str(), nullptr, 8));
  r.size = j.value("size", std::uintmax_t{0});
  r.content = j.value("content", std::string());
  return r;
}

unsigned Mode(const fs::file_status& status) {
  return static_cast<unsigned>(status.permissions() & fs::perms::mask);
}

// Every file, directory and symlink under `root` (symlinks not followed; other kinds left out),
// sorted by path; files hashed. kUnavailable naming the path that cannot be read.
Result<std::vector<Record>> Walk(const fs::path& root) {
  std::vector<Record> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    Record r;
    r.path = it->path().lexically_relative(root).generic_string();
    if (fs::is_symlink(status)) {
      r.type = "symlink";
      r.content = fs::read_symlink(it->path(), ec).string();
    } else if (fs::is_directory(status)) {
      r.type = "dir";
      r.mode = Mode(status);
    } else if (fs::is_regular_file(status)) {
      r.type = "file";
      r.mode = Mode(status);
      r.size = it->file_size(ec);
      auto digest = FileSha256(it->path());
      if (!digest) return MakeError(ErrorCode::kUnavailable, "cannot read " + it->path().string());
      r.content = std::move(*digest);
    } else {
      continue;  // sockets, FIFOs, devices: nothing a build's output needs
    }
    if (ec) break;
    out.push_back(std::move(r));
  }
  if (ec)
    return MakeError(ErrorCode::kUnavailable, "cannot read " + root.string() + ": " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const Record& a, const Record& b) { return a.path < b.path; });
  return out;
}

// A copy of the regular file `from` at `to` (which must not exist), sharing its blocks (FICLONE)
// where the file system can, with `from`'s permissions.
Result<void> CopyFile(const fs::path& from, const fs::path& to, fs::perms perms) {
  bool cloned = false;
#ifdef FICLONE
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in >= 0) {
    const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out >= 0) {
      cloned = ioctl(out, FICLONE, in) == 0;
      close(out);
      if (!cloned) unlink(to.c_str());
    }
    close(in);
  }
#endif
  std::error_code ec;
  if (!cloned) fs::copy_file(from, to, ec);
  if (!ec) fs::permissions(to, perms, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
  }
  return {};
}

// Copies the tree `from` to `to` (created; it must not exist): directories, files and symlinks
// with their permissions, symlinks as links. Directories get their permissions last, so that a
// read-only one can still be filled.
Result<void> CopyTree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::create_directory(to, ec) || ec) {
    return MakeError(ErrorCode::kUnavailable, "cannot create " + to.string());
  }
  std::vector<std::pair<fs::path, fs::perms>> dirs = {
      {to, fs::status(from, ec).permissions() & fs::perms::mask}};
  fs::recursive_directory_iterator it(from, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    const fs::path target = to / it->path().lexically_relative(from);
    if (fs::is_symlink(status)) {
      fs::copy_symlink(it->path(), target, ec);
    } else if (fs::is_directory(status)) {
      fs::create_directory(target, ec);
      dirs.emplace_back(target, status.permissions() & fs::perms::mask);
    } else if (fs::is_regular_file(status)) {
      if (auto copied = CopyFile(it->path(), target, status.permissions() & fs::perms::mask);
          !copied) {
        return copied;
      }
    }
    if (ec) break;
  }
  if (ec) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
  }
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) fs::permissions(d->first, d->second, ec);
  return {};
}

// remove_all, also of a tree with read-only directories (a build's module caches have them).
void RemoveTree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!ec) return;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code perms_ec;
    if (it->is_directory(perms_ec) && !it->is_symlink(perms_ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, perms_ec);
    }
  }
  fs::remove_all(path, ec);
}

// An empty directory DIR/tmp-XXXXXX; "" when it cannot be made.
fs::path MakeTemp(const fs::path& dir) {
  std::string pattern = (dir / (std::string(kTempPrefix) + "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

bool IsKeyName(const std::string& name) {
  return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The first line of what `shell` prints, when it exits 0; "" otherwise.
std::string FirstLine(const std::string& shell, const fs::path& scratch) {
  ProcessOptions p;
  p.argv = {"/bin/sh", "-c", shell};
  p.output_file = scratch / "toolchain.txt";
  p.timeout = std::chrono::seconds(30);
  auto result = RunProcess(p);
  std::string text = FileText(p.output_file);
  std::error_code ec;
  fs::remove(p.output_file, ec);
  if (!result || result->exit_code != 0 || result->timed_out) return "";
  return text.substr(0, text.find('\n'));
}

// A key's inputs as the manifest holds them: their JSON, or the text when it is not JSON.
json InputsJson(const std::string& inputs) {
  json parsed = json::parse(inputs, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? json(inputs) : parsed;
}

// Why the restored tree at `dest` is not the entry the manifest describes; "" when it is.
std::string Mismatch(const json& manifest, const BaselineCacheKey& key, const fs::path& dest) {
  if (manifest.value("format", 0) != kManifestFormat) return "unknown manifest format";
  if (manifest.value("key", std::string()) != key.hex ||
      manifest.at("inputs") != InputsJson(key.inputs)) {
    return "its manifest is not of this key";
  }
  std::vector<Record> listed;
  for (const json& j : manifest.at("entries")) listed.push_back(FromJson(j));
  auto found = Walk(dest);
  if (!found) return found.error().message;
  std::uintmax_t bytes = 0, files = 0;
  for (const Record& r : *found) {
    if (r.type == "file") {
      ++files;
      bytes += r.size;
    }
  }
  if (files != manifest.at("files").get<std::uintmax_t>() ||
      bytes != manifest.at("bytes").get<std::uintmax_t>()) {
    return std::to_string(files) + " files of " + std::to_string(bytes) + " bytes, the manifest " +
           "lists " + manifest.at("files").dump() + " of " + manifest.at("bytes").dump();
  }
  for (size_t i = 0; i < std::max(listed.size(), found->size()); ++i) {
    if (i < listed.size() && i < found->size() && listed[i] == (*found)[i]) continue;
    if (i >= found->size() || (i < listed.size() && listed[i].path < (*found)[i].path)) {
      return listed[i].path + " is missing";
    }
    if (i >= listed.size() || (*found)[i].path < listed[i].path) {
      return (*found)[i].path + " is not in the manifest";
    }
    return listed[i].path + " differs from the manifest";
  }
  return "";
}

}  // namespace

BaselineCacheSettings BaselineCacheOf(const config::RunnerConfig& config,
                                      const config::GateSettings& gate) {
  BaselineCacheSettings out;
  out.dir = gate.baseline_cache.empty() ? config.base_dir / ".perfwarden" / "baseline-cache"
                                        : gate.baseline_cache;
  out.max_entries = gate.baseline_cache_entries;
  return out;
}

Toolchain ProbeToolchain(const fs::path& scratch) {
  Toolchain out;
  // Unquoted on purpose: CXX may be a command with words ("ccache g++").
  out.cxx = FirstLine("exec ${CXX:-c++} --version", scratch);
  out.cc = FirstLine("exec ${CC:-cc} --version", scratch);
  utsname names{};
  out.machine = uname(&names) == 0 ? names.machine : "unknown";
  for (const char* name : kToolchainEnv) {
    if (const char* value = std::getenv(name); value != nullptr) out.env[name] = value;
  }
  return out;
}

BaselineCacheKey MakeBaselineCacheKey(const std::string& commit, const fs::path& config_path,
                                      const config::RunnerConfig& baseline, const fs::path& root,
                                      const std::set<std::string>& suites,
                                      const Toolchain& toolchain) {
  json inputs = {{"format", kKeyFormat},
                 {"commit", commit},
                 {"config", config_path.lexically_normal().generic_string()},
                 {"toolchain",
                  {{"cxx", toolchain.cxx},
                   {"cc", toolchain.cc},
                   {"machine", toolchain.machine},
                   {"env", toolchain.env}}},
                 {"suites", json::array()}};
  for (const std::string& name : suites) {  // a std::set: in name order
    json entry = {{"name", name}};
    if (const config::Suite* suite = baseline.FindSuite(name); suite != nullptr) {
      entry["type"] = config::SuiteTypeName(suite->type);
      entry["build"] = suite->build;
      entry["env"] = suite->env;
      if (suite->type == config::SuiteType::kGbench) {
        const fs::path inside = suite->binary.lexically_normal().lexically_relative(root);
        const bool in_tree = !inside.empty() && *inside.begin() != "..";
        entry["binary"] = in_tree ? inside.generic_string() : suite->binary.generic_string();
      }
    }
    inputs["suites"].push_back(std::move(entry));
  }
  BaselineCacheKey key;
  key.inputs = inputs.dump(-1, ' ', false, json::error_handler_t::replace);
  Sha256 sha;
  sha.Update(key.inputs.data(), key.inputs.size());
  key.hex = sha.HexDigest();
  return key;
}

bool BaselineCache::Restore(const BaselineCacheKey& key, const fs::path& dest,
                            const ProgressLine& progress) {
  const fs::path entry = settings_.dir / key.hex;
  std::error_code ec;
  if (!settings_.enabled() || !fs::is_directory(entry, ec) || fs::exists(dest, ec)) return false;
  std::string why;
  json manifest;
  {
    std::ifstream in(entry / kManifest);
    manifest = json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  if (!manifest.is_object()) {
    why = "no readable manifest";
  } else if (auto copied = CopyTree(entry / kTree, dest); !copied) {
    why = copied.error().message;
  } else {
    try {
      why = Mismatch(manifest, key, dest);
    } catch (const json::exception& e) {
      why = std::string("a malformed manifest: ") + e.what();
    }
  }
  if (why.empty()) {
    fs::last_write_time(entry / kManifest, fs::file_time_type::clock::now(), ec);  // used now
    return true;
  }
  RemoveTree(dest);
  progress("warning: the baseline build cache's entry " + key.hex.substr(0, 12) + " is damaged (" +
           why + "): removed, building the baseline again");
  Remove(entry);
  return false;
}

Result<void> BaselineCache::Store(const BaselineCacheKey& key, const fs::path& tree) {
  if (!settings_.enabled()) return {};
  std::error_code ec;
  fs::create_directories(settings_.dir, ec);
  const fs::path entry = settings_.dir / key.hex;
  if (fs::is_directory(entry, ec)) return {};  // another process stored it since our miss
  const fs::path temp = MakeTemp(settings_.dir);
  if (temp.empty()) {
    return MakeError(ErrorCode::kUnavailable, "cannot write into " + settings_.dir.string());
  }
  const auto fail = [&](const std::string& message) -> Result<void> {
    RemoveTree(temp);
    return MakeError(ErrorCode::kUnavailable, message);
  };
  if (auto copied = CopyTree(tree, temp / kTree); !copied) return fail(copied.error().message);
  auto records = Walk(temp / kTree);
  if (!records) return fail(records.error().message);
  json manifest = {{"format", kManifestFormat},
                   {"key", key.hex},
                   {"inputs", InputsJson(key.inputs)},
                   {"created", NowRfc3339()},
                   {"entries", json::array()}};
  std::uintmax_t files = 0, bytes = 0;
  for (const Record& r : *records) {
    if (r.type == "file") {
      ++files;
      bytes += r.size;
    }
    manifest["entries"].push_back(ToJson(r));
  }
  manifest["files"] = files;
  manifest["bytes"] = bytes;
  {
    std::ofstream out(temp / kManifest, std::ios::trunc);
    out << manifest.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    out.close();
    if (!out) return fail("cannot write " + (temp / kManifest).string());
  }
  // The one step that publishes the entry. A directory is renamed over nothing or over an
  // empty directory only: when a concurrent store got there first, its entry stays and this
  // copy goes.
  if (rename(temp.c_str(), entry.c_str()) != 0) {
    const int error = errno;
    RemoveTree(temp);
    if (error != ENOTEMPTY && error != EEXIST) {
      return MakeError(ErrorCode::kUnavailable,
                       "cannot rename " + temp.string() + " to " + entry.string());
    }
  }
  Evict(key.hex);
  return {};
}

std::vector<std::string> BaselineCache::Entries() const {
  std::vector<std::pair<fs::file_time_type, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(settings_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!IsKeyName(name)) continue;
    std::error_code time_ec;
    fs::file_time_type used = fs::last_write_time(it->path() / kManifest, time_ec);
    if (time_ec) used = fs::file_time_type::min();  // no manifest: damaged, the first to go
    found.emplace_back(used, name);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> out;
  for (auto& [used, name] : found) out.push_back(std::move(name));
  return out;
}

void BaselineCache::Evict(const std::string& keep) const {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  std::vector<fs::path> leftovers;
  for (fs::directory_iterator it(settings_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code time_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    if (it->path().filename().string().starts_with(kTempPrefix) && !time_ec &&
        now - written > kLeftoverAge) {
      leftovers.push_back(it->path());
    }
  }
  for (const fs::path& path : leftovers) RemoveTree(path);
  // The entry just stored stays, whatever the clock's resolution says about its age.
  int kept = 1;
  for (const std::string& name : Entries()) {
    if (name == keep) continue;
    if (kept < settings_.max_entries) {
      ++kept;
    } else {
      Remove(settings_.dir / name);
    }
  }
}

void BaselineCache::Remove(const fs::path& entry) const {
  // Renamed out of its name first, so that no reader starts on an entry half removed.
  std::error_code ec;
  const fs::path temp = MakeTemp(settings_.dir);
  if (!temp.empty() && rename(entry.c_str(), temp.c_str()) == 0) {
    RemoveTree(temp);
    return;
  }
  const int error = errno;
  if (!temp.empty()) fs::remove(temp, ec);
  // Gone already (another process removed it): a new entry of that key may be there by now.
  if (temp.empty() || error != ENOENT) RemoveTree(entry);
}

}  // namespace perfwarden::run
