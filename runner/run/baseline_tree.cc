// SPDX-License-Identifier: Apache-2.0
#include "runner/run/baseline_tree.h"

#include <optional>
#include <vector>

#include "runner/git/git_repo.h"

namespace perfwarden::run {

namespace fs = std::filesystem;

Result<BaselineTree> BaselineTree::Prepare(const config::RunnerConfig& head,
                                           const std::string& commit,
                                           const std::set<std::string>& suites,
                                           const ProgressLine& progress,
                                           const BaselineCacheSettings& cache) {
  auto repo = git::Repository::Open(head.base_dir.string());
  if (!repo) return tl::unexpected(repo.error());
  const fs::path root = repo->WorkDir();
  if (root.empty()) {
    return InvalidArgument("the repository of " + head.base_dir.string() +
                           " has no working tree to measure");
  }
  const fs::path relative = fs::relative(head.base_dir, root);
  const fs::path config_name =
      head.config_file.empty() ? fs::path("perfwarden.yaml") : head.config_file.filename();

  BaselineTree out;
  out.commit_ = commit;
  auto tree = TempDir::Make(head.spool_dir.parent_path(), "baseline-");
  if (!tree) return tl::unexpected(tree.error());
  out.tree_ = std::make_unique<TempDir>(std::move(*tree));
  const fs::path checkout = out.tree_->path() / "tree";
  progress("baseline " + commit.substr(0, 12) + ": exporting into " + checkout.string());
  if (auto exported = repo->ExportTree(commit, checkout.string()); !exported) {
    return tl::unexpected(exported.error());
  }
  auto config = config::LoadRunnerConfig((checkout / relative / config_name).string());
  if (!config) {
    return MakeError(config.error().code,
                     "the baseline's perfwarden.yaml: " + config.error().ToString());
  }
  out.config_ = std::make_unique<config::RunnerConfig>(std::move(*config));

  std::vector<const config::Suite*> selected;
  for (const std::string& name : suites) {
    const config::Suite* suite = out.config_->FindSuite(name);
    if (suite == nullptr) {
      return MakeError(ErrorCode::kNotFound, "suite " + name + " is not in the baseline " +
                                                 commit.substr(0, 12) + "'s perfwarden.yaml");
    }
    selected.push_back(suite);
  }

  // The export is the cheap part, and it is what the key is read from (the baseline's own
  // build commands); the build is what a hit saves. A hit replaces the export whole, the files
  // the build left included, at the same path, so out.config_'s paths hold.
  const std::string sha12 = commit.substr(0, 12);
  BaselineCache cached(cache);
  std::optional<BaselineCacheKey> key;
  bool restored = false;
  if (cache.enabled()) {
    key = MakeBaselineCacheKey(commit, relative / config_name, *out.config_, checkout, suites,
                               ProbeToolchain(out.tree_->path()));
    const fs::path staging = out.tree_->path() / "cached";
    std::error_code ec;
    if (cached.Restore(*key, staging, progress)) {
      fs::remove_all(checkout, ec);
      if (!ec) fs::rename(staging, checkout, ec);
      restored = !ec;
      if (ec) {  // the export is gone: nothing to build in
        return MakeError(ErrorCode::kUnavailable, "the baseline " + sha12 + ": cannot move " +
                                                      staging.string() +
                                                      " into place: " + ec.message());
      }
      progress("baseline " + sha12 + ": build cache hit (" + key->hex.substr(0, 12) + ")");
    } else {
      progress("baseline " + sha12 + ": build cache miss (" + key->hex.substr(0, 12) +
               "): building");
    }
  }
  for (const config::Suite* suite : selected) {
    if (restored) continue;
    auto built = BuildSuite(*out.config_, *suite, progress);
    if (!built) {
      return MakeError(built.error().code, "the baseline " + sha12 + ": " + built.error().message);
    }
  }

  for (const config::Suite* suite : selected) {
    const std::string& name = suite->name;
    // A command runs in the baseline tree, so its scripts are the baseline's. A Google Benchmark
    // binary inside the tree must have come out of the baseline's build; one outside it (a
    // binary both commits configure differently, through env or args) runs for both sides with
    // each commit's own settings.
    if (suite->type == config::SuiteType::kGbench) {
      const fs::path binary = suite->binary.lexically_normal();
      const fs::path inside = binary.lexically_relative(out.tree_->path());
      const bool in_tree = !inside.empty() && *inside.begin() != "..";
      std::error_code ec;
      if (in_tree && !fs::exists(binary, ec)) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "suite " + name + ": its binary " + suite->binary.string() +
                             " is not in the baseline tree" +
                             (suite->build.empty() ? " and the suite has no build command"
                                                   : " after its build command") +
                             ": the baseline " + commit.substr(0, 12) +
                             " cannot be measured side by side");
      }
      if (!in_tree) {
        progress("suite " + name + ": its binary " + suite->binary.string() +
                 " is outside the repository: both sides run it, each with its commit's "
                 "perfwarden.yaml settings");
      }
    }
  }
  // Stored once it is known to be measurable, before anything has run in it.
  if (key && !restored) {
    if (auto stored = cached.Store(*key, checkout); stored) {
      progress("baseline " + sha12 + ": build cached as " + key->hex.substr(0, 12) + " in " +
               cache.dir.string());
    } else {
      progress("warning: the baseline build was not cached: " + stored.error().message);
    }
  }
  return out;
}

fs::path BaselineTree::WorkDir(const std::string& name) const {
  const fs::path dir = tree_->path() / name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir;
}

}  // namespace perfwarden::run
