// SPDX-License-Identifier: Apache-2.0
// runner/run: the paired gate's baseline build cache, on a scratch repository whose build command
// counts its runs in a file outside the tree (real git, real builds): a miss builds and stores, a
// hit restores without building, other commits and build commands miss, damaged entries are
// rebuilt with a warning, the least recently used go beyond the bound, and concurrent stores of
// one key leave one whole entry. Also perfwarden.yaml's gate.baseline_cache keys and their
// override.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/runner_config.h"
#include "runner/run/baseline_cache.h"
#include "runner/run/baseline_tree.h"
#include "tests/testing/shell.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

class BaselineCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfwarden-cache-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    repo_ = dir_ / "repo";
    count_ = dir_ / "builds.count";
    cache_.dir = dir_ / "cache";
    cache_.max_entries = 4;
    fs::create_directories(repo_);
    Git("init -q -b main");
    Git("config user.email t@example.com");
    Git("config user.name T");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Git(const std::string& args) {
    const auto out = testing::RunShell("git -C " + repo_.string() + " " + args);
    ASSERT_EQ(out.exit_code, 0) << args << ": " << out.output;
  }

  // A commit whose suite `tick` builds side.sh (echoing `side`), counting its builds in count_.
  // The tree also holds an executable script and a symlink, which a restore must keep.
  std::string Commit(const std::string& side, const std::string& extra_build = "") {
    std::ofstream(repo_ / "perfwarden.yaml") << "version: 1\n"
                                             << "suites:\n"
                                             << "  - name: tick\n"
                                             << "    type: command\n"
                                             << "    build: \"echo built >> " << count_.string()
                                             << " && sh make-side.sh" << extra_build << "\"\n"
                                             << "    command: \"sh side.sh\"\n"
                                             << "    repetitions: 2\n"
                                             << "    warmup: 0\n";
    std::ofstream(repo_ / "make-side.sh")
        << "mkdir -p out && printf 'echo " << side << "\\n' > out/side.sh\n"
        << "cp out/side.sh side.sh\n";
    std::ofstream(repo_ / "run.sh") << "#!/bin/sh\necho run\n";
    fs::permissions(repo_ / "run.sh", fs::perms::owner_all);
    std::error_code ec;
    fs::remove(repo_ / "link.sh", ec);
    fs::create_symlink("run.sh", repo_ / "link.sh");
    Git("add -A");
    Git("commit -q -m " + side);
    const auto sha = testing::RunShell("git -C " + repo_.string() + " rev-parse HEAD");
    return sha.output.substr(0, 40);
  }

  config::RunnerConfig Load() {
    auto config = config::LoadRunnerConfig((repo_ / "perfwarden.yaml").string());
    if (!config) {
      ADD_FAILURE() << config.error().ToString();
      return {};
    }
    return *config;
  }

  int Builds() {
    std::ifstream in(count_);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  // Prepare with the cache, its progress lines in lines_.
  Result<BaselineTree> Prepare(const std::string& commit) {
    lines_.clear();
    return BaselineTree::Prepare(
        Load(), commit, {"tick"}, [this](const std::string& line) { lines_.push_back(line); },
        cache_);
  }

  bool Said(const std::string& part) const {
    for (const std::string& line : lines_) {
      if (line.find(part) != std::string::npos) return true;
    }
    return false;
  }
  std::string Lines() const {
    std::string out;
    for (const std::string& line : lines_) out += line + "\n";
    return out;
  }

  std::vector<std::string> Entries() const { return BaselineCache(cache_).Entries(); }

  // The only entry's tree.
  fs::path EntryTree() {
    const std::vector<std::string> entries = Entries();
    EXPECT_EQ(entries.size(), 1u);
    return entries.empty() ? fs::path() : cache_.dir / entries[0] / "tree";
  }

  fs::path dir_, repo_, count_;
  BaselineCacheSettings cache_;
  std::vector<std::string> lines_;
};

TEST_F(BaselineCacheTest, AMissBuildsAndStoresAndAHitRestoresWithoutBuilding) {
  const std::string base = Commit("base");
  {
    auto tree = Prepare(base);
    ASSERT_TRUE(tree.has_value()) << tree.error().ToString();
    EXPECT_EQ(Builds(), 1);
    EXPECT_TRUE(Said("baseline " + base.substr(0, 12) + ": build cache miss (")) << Lines();
    EXPECT_TRUE(Said("build cached as ")) << Lines();
  }
  const std::vector<std::string> entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  const fs::path entry = cache_.dir / entries[0];
  EXPECT_TRUE(fs::exists(entry / "tree" / "out" / "side.sh"));  // what the build made
  const std::string manifest = Read(entry / "manifest.json");
  EXPECT_NE(manifest.find("\"commit\": \"" + base + "\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"created\""), std::string::npos);
  EXPECT_NE(manifest.find("\"files\""), std::string::npos);
  EXPECT_NE(manifest.find("\"path\": \"out/side.sh\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"content\": \""), std::string::npos) << manifest;  // its SHA-256

  auto again = Prepare(base);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(Builds(), 1);  // the build command did not run
  EXPECT_TRUE(Said("baseline " + base.substr(0, 12) + ": build cache hit (" +
                   entries[0].substr(0, 12) + ")"))
      << Lines();
  // The restored tree is the built one, where the baseline's perfwarden.yaml says it is.
  const fs::path tree = again->config().base_dir;
  EXPECT_EQ(Read(tree / "side.sh"), "echo base\n");
  EXPECT_EQ(Read(tree / "out" / "side.sh"), "echo base\n");
  EXPECT_TRUE(fs::is_symlink(tree / "link.sh"));
  EXPECT_EQ(fs::read_symlink(tree / "link.sh"), "run.sh");
  EXPECT_NE(fs::status(tree / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  EXPECT_EQ(testing::RunShell("sh " + (tree / "side.sh").string()).output, "base\n");
}

TEST_F(BaselineCacheTest, AnotherCommitOrBuildCommandMisses) {
  const std::string first = Commit("base");
  ASSERT_TRUE(Prepare(first).has_value());
  EXPECT_EQ(Builds(), 1);
  // The same build command at another commit.
  std::ofstream(repo_ / "README") << "another commit\n";
  Git("add -A");
  Git("commit -q -m readme");
  const std::string second =
      testing::RunShell("git -C " + repo_.string() + " rev-parse HEAD").output.substr(0, 40);
  ASSERT_TRUE(Prepare(second).has_value());
  EXPECT_EQ(Builds(), 2);
  EXPECT_TRUE(Said("build cache miss")) << Lines();
  // Another build command.
  const std::string third = Commit("base", " && true");
  ASSERT_TRUE(Prepare(third).has_value());
  EXPECT_EQ(Builds(), 3);
  EXPECT_EQ(Entries().size(), 3u);
  // Each of them hits now.
  for (const std::string& commit : {first, second, third}) {
    ASSERT_TRUE(Prepare(commit).has_value());
    EXPECT_TRUE(Said("build cache hit")) << Lines();
  }
  EXPECT_EQ(Builds(), 3);
}

TEST_F(BaselineCacheTest, TheKeyCoversCommitBuildToolchainAndNotHowASuiteRuns) {
  const std::string commit = Commit("base");
  config::RunnerConfig baseline = Load();
  const fs::path root = baseline.base_dir;
  const Toolchain gcc{
      "c++ (Debian 12.2.0-14) 12.2.0", "cc (Debian 12.2.0-14) 12.2.0", "x86_64", {}};
  const auto key = [&](const config::RunnerConfig& c, const Toolchain& t,
                       const std::string& sha = "") {
    return MakeBaselineCacheKey(sha.empty() ? commit : sha, "perfwarden.yaml", c, root, {"tick"}, t)
        .hex;
  };
  const std::string reference = key(baseline, gcc);
  EXPECT_EQ(reference.size(), 64u);
  EXPECT_EQ(key(baseline, gcc), reference);  // deterministic

  std::set<std::string> keys = {reference};
  Toolchain clang = gcc;
  clang.cxx = "clang version 15.0.6";
  keys.insert(key(baseline, clang));
  Toolchain arm = gcc;
  arm.machine = "aarch64";
  keys.insert(key(baseline, arm));
  Toolchain flags = gcc;
  flags.env["CXXFLAGS"] = "-O3";
  keys.insert(key(baseline, flags));
  keys.insert(key(baseline, gcc, std::string(40, 'a')));
  config::RunnerConfig build = baseline;
  build.suites[0].build += " && true";
  keys.insert(key(build, gcc));
  config::RunnerConfig env = baseline;
  env.suites[0].env["OPT"] = "1";
  keys.insert(key(env, gcc));
  EXPECT_EQ(keys.size(), 7u);
  EXPECT_NE(MakeBaselineCacheKey(commit, "sub/perfwarden.yaml", baseline, root, {"tick"}, gcc).hex,
            reference);

  // How the suite runs is not the build's business.
  config::RunnerConfig runs = baseline;
  runs.suites[0].command = {"/bin/sh", "-c", "sh side.sh --fast"};
  runs.suites[0].repetitions = 9;
  EXPECT_EQ(key(runs, gcc), reference);

  // The key's inputs say what they are made of.
  const BaselineCacheKey full =
      MakeBaselineCacheKey(commit, "./perfwarden.yaml", baseline, root, {"tick"}, gcc);
  EXPECT_EQ(full.hex, reference);  // the path is normalised
  EXPECT_NE(full.inputs.find("\"format\":\"perfwarden-baseline-cache/1\""), std::string::npos)
      << full.inputs;
  EXPECT_NE(full.inputs.find("\"build\":\"echo built >> "), std::string::npos) << full.inputs;
}

TEST_F(BaselineCacheTest, AGbenchBinaryIsKeyedRelativeToTheTree) {
  const auto yaml = [](const std::string& binary) {
    return "version: 1\nsuites:\n  - {name: b, type: gbench, binary: " + binary +
           ", build: make}\n";
  };
  auto here = config::ParseRunnerConfig(yaml("build/b"), "perfwarden.yaml", "/one/repo");
  auto there = config::ParseRunnerConfig(yaml("build/b"), "perfwarden.yaml", "/two/repo");
  auto other = config::ParseRunnerConfig(yaml("build/c"), "perfwarden.yaml", "/one/repo");
  ASSERT_TRUE(here && there && other);
  const Toolchain t;
  const std::string sha(40, 'b');
  const BaselineCacheKey a =
      MakeBaselineCacheKey(sha, "perfwarden.yaml", *here, "/one/repo", {"b"}, t);
  EXPECT_EQ(a.hex, MakeBaselineCacheKey(sha, "perfwarden.yaml", *there, "/two/repo", {"b"}, t).hex);
  EXPECT_NE(a.hex, MakeBaselineCacheKey(sha, "perfwarden.yaml", *other, "/one/repo", {"b"}, t).hex);
  EXPECT_NE(a.inputs.find("\"binary\":\"build/b\""), std::string::npos) << a.inputs;
}

TEST_F(BaselineCacheTest, ADamagedEntryIsRemovedAndRebuiltWithAWarning) {
  const std::string base = Commit("base");
  ASSERT_TRUE(Prepare(base).has_value());
  ASSERT_EQ(Builds(), 1);
  int builds = 1;
  // Each damage in turn: the next Prepare warns, builds, and stores a whole entry again.
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> damages = {
      {"a file deleted", [](const fs::path& tree) { fs::remove(tree / "out" / "side.sh"); }},
      {"a file truncated", [](const fs::path& tree) { fs::resize_file(tree / "side.sh", 2); }},
      {"a byte changed",
       [](const fs::path& tree) {
         std::fstream f(tree / "side.sh", std::ios::in | std::ios::out | std::ios::binary);
         f.seekp(0);
         f.put('E');
       }},
      {"a file added", [](const fs::path& tree) { std::ofstream(tree / "extra") << "x"; }},
      {"a mode changed",
       [](const fs::path& tree) { fs::permissions(tree / "run.sh", fs::perms::owner_read); }},
      {"the manifest of another key",
       [](const fs::path& tree) {
         const fs::path manifest = tree.parent_path() / "manifest.json";
         std::string text = Read(manifest);
         const size_t at = text.find("\"commit\": \"") + 11;
         text[at] = text[at] == '0' ? '1' : '0';
         std::ofstream(manifest, std::ios::trunc) << text;
       }},
      {"the manifest truncated",
       [](const fs::path& tree) { fs::resize_file(tree.parent_path() / "manifest.json", 10); }},
      {"the manifest deleted",
       [](const fs::path& tree) { fs::remove(tree.parent_path() / "manifest.json"); }},
  };
  for (const auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    const fs::path tree = EntryTree();
    ASSERT_FALSE(tree.empty());
    damage(tree);
    auto again = Prepare(base);
    ASSERT_TRUE(again.has_value()) << again.error().ToString();
    EXPECT_EQ(Builds(), ++builds);
    EXPECT_TRUE(Said("warning: the baseline build cache's entry ")) << Lines();
    EXPECT_TRUE(Said("is damaged (")) << Lines();
    EXPECT_FALSE(Said("build cache hit")) << Lines();
    EXPECT_EQ(Read(again->config().base_dir / "side.sh"), "echo base\n");
    // Stored again, whole: the next one hits.
    ASSERT_TRUE(Prepare(base).has_value());
    EXPECT_TRUE(Said("build cache hit")) << Lines();
    EXPECT_EQ(Builds(), builds);
  }
}

// A tree with one file, stored under the key of `commit` (no git needed).
BaselineCacheKey StoreTree(BaselineCache& cache, const fs::path& tree, const std::string& commit) {
  config::RunnerConfig none;
  const BaselineCacheKey key = MakeBaselineCacheKey(commit, "perfwarden.yaml", none, tree, {}, {});
  EXPECT_TRUE(cache.Store(key, tree).has_value());
  return key;
}

void SetUsed(const fs::path& entry, std::chrono::hours ago) {
  fs::last_write_time(entry / "manifest.json", fs::file_time_type::clock::now() - ago);
}

TEST_F(BaselineCacheTest, TheLeastRecentlyUsedEntriesGoBeyondTheBound) {
  const fs::path tree = dir_ / "t";
  fs::create_directories(tree / "sub");
  std::ofstream(tree / "sub" / "f") << "payload";
  cache_.max_entries = 2;
  BaselineCache cache(cache_);
  const BaselineCacheKey a = StoreTree(cache, tree, std::string(40, 'a'));
  const BaselineCacheKey b = StoreTree(cache, tree, std::string(40, 'b'));
  SetUsed(cache_.dir / a.hex, std::chrono::hours(3));
  SetUsed(cache_.dir / b.hex, std::chrono::hours(2));
  EXPECT_EQ(Entries(), (std::vector<std::string>{b.hex, a.hex}));
  // Using a makes b the least recently used one.
  ASSERT_TRUE(cache.Restore(a, dir_ / "restored", [](const std::string&) {}));
  EXPECT_EQ(Read(dir_ / "restored" / "sub" / "f"), "payload");
  EXPECT_EQ(Entries(), (std::vector<std::string>{a.hex, b.hex}));
  const BaselineCacheKey c = StoreTree(cache, tree, std::string(40, 'c'));
  std::vector<std::string> left = Entries();
  std::sort(left.begin(), left.end());
  std::vector<std::string> expected = {a.hex, c.hex};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
  EXPECT_FALSE(fs::exists(cache_.dir / b.hex));
  // The entry just stored stays even when the clock says the others are newer.
  SetUsed(cache_.dir / a.hex, std::chrono::hours(-1));
  SetUsed(cache_.dir / c.hex, std::chrono::hours(-2));
  const BaselineCacheKey d = StoreTree(cache, tree, std::string(40, 'd'));
  EXPECT_TRUE(fs::exists(cache_.dir / d.hex));
  EXPECT_EQ(Entries().size(), 2u);
}

TEST_F(BaselineCacheTest, LeftoversOfDeadWritersGoAndLiveOnesStay) {
  const fs::path tree = dir_ / "t";
  fs::create_directories(tree);
  std::ofstream(tree / "f") << "x";
  fs::create_directories(cache_.dir / "tmp-dead00" / "tree");
  fs::create_directories(cache_.dir / "tmp-live00" / "tree");
  fs::last_write_time(cache_.dir / "tmp-dead00",
                      fs::file_time_type::clock::now() - std::chrono::hours(48));
  BaselineCache cache(cache_);
  StoreTree(cache, tree, std::string(40, 'e'));
  EXPECT_FALSE(fs::exists(cache_.dir / "tmp-dead00"));
  EXPECT_TRUE(fs::exists(cache_.dir / "tmp-live00"));
}

TEST_F(BaselineCacheTest, ConcurrentStoresOfOneKeyLeaveOneWholeEntry) {
  const fs::path tree = dir_ / "t";
  for (int i = 0; i < 50; ++i) {
    fs::create_directories(tree / ("d" + std::to_string(i % 5)));
    std::ofstream(tree / ("d" + std::to_string(i % 5)) / ("f" + std::to_string(i)))
        << std::string(1000 + i, 'x');
  }
  const BaselineCacheKey key = MakeBaselineCacheKey(std::string(40, 'f'), "perfwarden.yaml",
                                                    config::RunnerConfig{}, tree, {}, {});
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(round);
    std::vector<std::thread> writers;
    std::vector<int> ok(4, 0);
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&, w] { ok[w] = BaselineCache(cache_).Store(key, tree).has_value(); });
    }
    for (std::thread& t : writers) t.join();
    EXPECT_EQ(ok, std::vector<int>(4, 1));
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(cache_.dir)) {
      names.push_back(e.path().filename().string());
    }
    EXPECT_EQ(names, std::vector<std::string>{key.hex});  // no tmp-* left behind
    const fs::path restored = dir_ / ("restored" + std::to_string(round));
    std::vector<std::string> warnings;
    EXPECT_TRUE(BaselineCache(cache_).Restore(
        key, restored, [&](const std::string& line) { warnings.push_back(line); }));
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(Read(restored / "d3" / "f13"), std::string(1013, 'x'));
    fs::remove_all(cache_.dir);
  }
}

TEST_F(BaselineCacheTest, NoCacheBuildsEveryTimeAndWritesNothing) {
  const std::string base = Commit("base");
  cache_.max_entries = 0;
  ASSERT_TRUE(Prepare(base).has_value());
  ASSERT_TRUE(Prepare(base).has_value());
  EXPECT_EQ(Builds(), 2);
  EXPECT_FALSE(fs::exists(cache_.dir));
  EXPECT_FALSE(Said("build cache")) << Lines();
}

TEST_F(BaselineCacheTest, AMissingEntryIsAMissAndAnExistingDestinationIsLeftAlone) {
  BaselineCache cache(cache_);
  const BaselineCacheKey key = MakeBaselineCacheKey(std::string(40, '1'), "perfwarden.yaml",
                                                    config::RunnerConfig{}, "/", {}, {});
  std::vector<std::string> lines;
  const auto progress = [&](const std::string& line) { lines.push_back(line); };
  EXPECT_FALSE(cache.Restore(key, dir_ / "nothing", progress));
  EXPECT_TRUE(lines.empty());
  const fs::path tree = dir_ / "t";
  fs::create_directories(tree);
  ASSERT_TRUE(cache.Store(key, tree).has_value());
  fs::create_directories(dir_ / "taken");
  EXPECT_FALSE(cache.Restore(key, dir_ / "taken", progress));
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(Entries(), std::vector<std::string>{key.hex});  // not mistaken for damage
}

config::EnvLookup Env(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(BaselineCacheConfig, TheDirectoryComesFromTheFlagTheEnvironmentOrTheFileInThatOrder) {
  const std::string suites = "suites:\n  - {name: a, type: command, command: \"true\"}\n";
  // Default: under the config's directory.
  auto plain = config::ParseRunnerConfig("version: 1\n" + suites, "p.yaml", "/repo", Env({}));
  ASSERT_TRUE(plain) << plain.error().ToString();
  EXPECT_EQ(plain->gate, config::GateSettings{});
  BaselineCacheSettings settings = BaselineCacheOf(*plain, plain->gate);
  EXPECT_EQ(settings.dir, fs::path("/repo/.perfwarden/baseline-cache"));
  EXPECT_EQ(settings.max_entries, 4);
  EXPECT_TRUE(settings.enabled());
  // The file: relative to its directory.
  const std::string yaml =
      "version: 1\ngate: {baseline_cache: ../cache, baseline_cache_entries: 2}\n" + suites;
  auto file = config::ParseRunnerConfig(yaml, "p.yaml", "/repo/sub", Env({}));
  ASSERT_TRUE(file) << file.error().ToString();
  settings = BaselineCacheOf(*file, file->gate);
  EXPECT_EQ(settings.dir, fs::path("/repo/cache"));
  EXPECT_EQ(settings.max_entries, 2);
  // The environment wins over the file.
  auto env = config::ParseRunnerConfig(yaml, "p.yaml", "/repo/sub",
                                       Env({{"PERFWARDEN_BASELINE_CACHE", "/ci/cache"}}));
  ASSERT_TRUE(env) << env.error().ToString();
  EXPECT_EQ(env->gate.baseline_cache, fs::path("/ci/cache"));
  EXPECT_EQ(env->gate.baseline_cache_entries, 2);
  // 0 entries: no cache.
  auto off = config::ParseRunnerConfig("version: 1\ngate: {baseline_cache_entries: 0}\n" + suites,
                                       "p.yaml", "/repo", Env({}));
  ASSERT_TRUE(off) << off.error().ToString();
  EXPECT_FALSE(BaselineCacheOf(*off, off->gate).enabled());
  // Errors name the key.
  auto empty = config::ParseRunnerConfig("version: 1\ngate: {baseline_cache: \"\"}\n" + suites,
                                         "p.yaml", "/repo", Env({}));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().ToString().find("gate.baseline_cache"), std::string::npos)
      << empty.error().ToString();
  auto many = config::ParseRunnerConfig(
      "version: 1\ngate: {baseline_cache_entries: 1001}\n" + suites, "p.yaml", "/repo", Env({}));
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().ToString().find("gate.baseline_cache_entries"), std::string::npos)
      << many.error().ToString();
}

}  // namespace
}  // namespace perfwarden::run
