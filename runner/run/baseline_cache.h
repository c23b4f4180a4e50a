// SPDX-License-Identifier: Apache-2.0
// The paired gate's cache of built baselines: a baseline commit's exported tree after its build,
// kept under a key of what decides the build's output (commit, build settings, toolchain) and
// restored instead of building again; entries are renamed into place, checked against their
// manifest on every use and bounded by least recent use. docs/ci.md, "Caching the baseline build".
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/run/suites.h"

namespace perfwarden::run {

struct BaselineCacheSettings {
  std::filesystem::path dir;  // "" : no cache
  int max_entries = 4;        // 0: no cache
  bool enabled() const { return !dir.empty() && max_entries > 0; }
};

// The cache `gate` asks for (perfwarden.yaml's gate.baseline_cache and baseline_cache_entries, with
// PERFWARDEN_BASELINE_CACHE and the command line already applied); an empty directory there is the
// default, <config dir>/.perfwarden/baseline-cache.
BaselineCacheSettings BaselineCacheOf(const config::RunnerConfig& config,
                                      const config::GateSettings& gate);

// What a build depends on besides the commit's files: the compilers and the machine.
struct Toolchain {
  std::string cxx;      // first line of `${CXX:-c++} --version`; "" when it does not run
  std::string cc;       // first line of `${CC:-cc} --version`; "" when it does not run
  std::string machine;  // uname -m: "x86_64", "aarch64"
  std::map<std::string, std::string> env;  // those of kToolchainEnv that are set
};

// The environment variables that choose or configure a compiler, in the key with their values.
inline constexpr const char* kToolchainEnv[] = {"CC",       "CXX",      "CFLAGS",
                                                "CXXFLAGS", "CPPFLAGS", "LDFLAGS"};

// This host's toolchain: two short child processes whose output goes to a file in `scratch`.
Toolchain ProbeToolchain(const std::filesystem::path& scratch);

struct BaselineCacheKey {
  std::string inputs;  // what the key is made of, as canonical JSON (the manifest repeats it)
  std::string hex;     // SHA-256 of `inputs`, 64 lowercase hex digits: the entry's name
};

// The key of the tree exported at `root` and built for `suites` of `baseline` (that tree's
// perfwarden.yaml, at `config_path` relative to `root`): the commit, config_path, the toolchain,
// and per suite its name, type, build command, environment and (gbench) binary relative to `root`.
// The suites' args, filters and commands are left out: they change how a suite runs, not what
// its build makes.
BaselineCacheKey MakeBaselineCacheKey(const std::string& commit,
                                      const std::filesystem::path& config_path,
                                      const config::RunnerConfig& baseline,
                                      const std::filesystem::path& root,
                                      const std::set<std::string>& suites,
                                      const Toolchain& toolchain);

// One cache directory: DIR/<key hex>/{manifest.json, tree/}, and DIR/tmp-XXXXXX while an entry
// is written or removed. Any number of processes may share it.
class BaselineCache {
 public:
  explicit BaselineCache(BaselineCacheSettings settings) : settings_(std::move(settings)) {}

  // Restores the entry `key` as the directory `dest` (which must not exist): copied, reflinked
  // where the file system can, then checked against the entry's manifest (its key, every path,
  // type, mode, size and SHA-256). true: a hit, the entry marked as used. false: no entry, or
  // one that failed the check, which is removed (a warning line through `progress`); `dest` is
  // gone then.
  bool Restore(const BaselineCacheKey& key, const std::filesystem::path& dest,
               const ProgressLine& progress);

  // Stores a copy of `tree` as the entry `key`: written into DIR/tmp-XXXXXX with its manifest,
  // then renamed to DIR/<key>, so a reader never sees half an entry; when another process stored
  // the key first, its entry stays. Then the least recently used entries beyond max_entries go,
  // and so do the leftovers of processes that died while writing (older than a day).
  // kUnavailable when the copy cannot be written: the caller warns and goes on without it.
  Result<void> Store(const BaselineCacheKey& key, const std::filesystem::path& tree);

  // The entries' keys, the most recently used first.
  std::vector<std::string> Entries() const;

 private:
  void Evict(const std::string& keep) const;
  void Remove(const std::filesystem::path& entry) const;

  BaselineCacheSettings settings_;
};

}  // namespace perfwarden::run
