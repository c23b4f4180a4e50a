// SPDX-License-Identifier: Apache-2.0
#include "runner/local_bisect/bisect_run.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bisect/search.h"
#include "runner/local_bisect/bisect_probe.h"
#include "runner/run/temp_dir.h"

namespace perfwarden::local_bisect {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void Progress(const std::string& line) { std::fprintf(stderr, "perfwarden: %s\n", line.c_str()); }

// Everything a later `perfwarden bisect` with the same arguments needs to continue: the
// measurements made so far, in order (the driver replays them), and what they cost.
class State {
 public:
  State(fs::path path, json identity) : path_(std::move(path)), identity_(std::move(identity)) {}

  bool Load(std::vector<bisect::Measurement>* log, int* builds, int* runs) const {
    std::ifstream in(path_);
    if (!in) return false;
    const json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("identity", json()) != identity_) {
      Progress("ignoring " + path_.string() + ": it is not a state of this bisect");
      return false;
    }
    for (const json& m : j.value("measurements", json::array())) {
      auto measurement = bisect::MeasurementFromJson(m);
      if (!measurement) {
        Progress("ignoring the rest of " + path_.string() + ": " + measurement.error().ToString());
        break;
      }
      log->push_back(std::move(*measurement));
    }
    *builds = j.value("builds", 0);
    *runs = j.value("runs", 0);
    return !log->empty();
  }

  // Written to a temporary file and renamed, so that an interrupted write keeps the old state.
  void Save(const std::vector<bisect::Measurement>& log, const bisect::Measurement* more,
            int builds, int runs) const {
    json list = json::array();
    for (const bisect::Measurement& m : log) list.push_back(bisect::MeasurementJson(m));
    if (more != nullptr) list.push_back(bisect::MeasurementJson(*more));
    const json out = {
        {"identity", identity_}, {"builds", builds}, {"runs", runs}, {"measurements", list}};
    std::error_code ec;
    fs::create_directories(path_.parent_path(), ec);
    const fs::path temp = path_.string() + ".tmp";
    {
      std::ofstream file(temp);
      file << out.dump(1) << "\n";
    }
    fs::rename(temp, path_, ec);
  }

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  json identity_;
};

}  // namespace

bisect::SearchOptions SearchOptionsOf(const BisectOptions& options) {
  bisect::SearchOptions search;
  search.threshold = options.threshold;
  search.repetitions = options.repetitions;
  search.max_repetitions = options.max_repetitions;
  search.alpha = options.alpha;
  return search;
}

Result<BisectRange> ListBisectRange(const git::Repository& repo, const BisectOptions& options) {
  if (options.benchmarks.empty()) return InvalidArgument("name a benchmark", "benchmark");
  if (options.repetitions < 2) return InvalidArgument("must be at least 2", "repetitions");
  if (options.max_repetitions < options.repetitions) {
    return InvalidArgument("must be at least --repetitions", "max-repetitions");
  }
  auto good = repo.ResolveSha(options.good);
  if (!good) return tl::unexpected(good.error());
  auto bad = repo.ResolveSha(options.bad);
  if (!bad) return tl::unexpected(bad.error());
  auto range = repo.ListRange(*good, *bad, options.first_parent);
  if (!range) return tl::unexpected(range.error());
  if (range->empty()) return InvalidArgument("good and bad are the same commit", "bad");
  auto good_info = repo.Describe(*good);
  if (!good_info) return tl::unexpected(good_info.error());
  BisectRange out;
  out.commits.reserve(range->size() + 1);
  out.commits.push_back(std::move(*good_info));
  for (git::CommitInfo& c : *range) out.commits.push_back(std::move(c));
  return out;
}

Result<bisect::Report> RunBisect(const config::RunnerConfig& config, const BisectOptions& options) {
  auto repo = git::Repository::Open(config.base_dir.string());
  if (!repo) return tl::unexpected(repo.error());
  auto range = ListBisectRange(*repo, options);
  if (!range) return tl::unexpected(range.error());
  const std::vector<git::CommitInfo>& commits = range->commits;
  std::vector<bisect::CommitRef> refs;
  for (const git::CommitInfo& c : commits) refs.push_back({c.sha, c.subject, c.author});
  const std::string& good = commits.front().sha;
  const std::string& bad = commits.back().sha;

  // Version 2: a log of measurements (version 1 kept marks per commit).
  const json identity = {{"version", 2},
                         {"good", good},
                         {"bad", bad},
                         {"benchmarks", options.benchmarks},
                         {"metric", options.metric},
                         {"suite", options.suite},
                         {"build", options.build},
                         {"first_parent", options.first_parent},
                         {"search", bisect::SearchOptionsJson(SearchOptionsOf(options))}};
  fs::path state_path = options.state_file;
  if (state_path.empty()) {
    state_path = config.spool_dir.parent_path() /
                 ("bisect-" + good.substr(0, 12) + "-" + bad.substr(0, 12) + ".json");
  }
  const State state(state_path, identity);
  std::vector<bisect::Measurement> log;
  int builds = 0, runs = 0;
  const bool resumed = state.Load(&log, &builds, &runs);
  const std::size_t kept = log.size();
  if (resumed) {
    Progress("resuming the bisect kept in " + state.path().string() + " (" + std::to_string(kept) +
             " measurements)");
  }

  auto temp = run::TempDir::Make(config.spool_dir.parent_path(), "bisect-");
  if (!temp) return tl::unexpected(temp.error());
  Prober prober(config, {options.benchmarks, options.suite, options.metric, options.build}, *repo,
                temp->path());
  // Each new measurement is saved before the driver goes on, so that a bisect stopped at any
  // point loses at most the measurement it was making.
  auto measure = [&](const bisect::Request& request) -> Result<bisect::Measurement> {
    std::vector<git::CommitInfo> targets;
    for (const std::size_t t : request.targets) targets.push_back(commits[t]);
    auto m = prober.Measure(targets, request.repetitions);
    if (!m) return m;
    m->request = request;
    state.Save(log, &*m, builds + prober.builds(), runs + prober.runs());
    return m;
  };
  auto outcome = bisect::RunSearch(refs, SearchOptionsOf(options), &log, measure,
                                   [](const std::string& s) { Progress(s); });
  if (!outcome) return tl::unexpected(outcome.error());
  bisect::Report report = std::move(outcome->report);
  report.benchmarks = options.benchmarks;
  report.builds = builds + prober.builds();
  report.runs = runs + prober.runs();
  report.measurements = log.size();
  report.resumed = resumed;
  report.resumed_measurements = kept;
  state.Save(log, nullptr, report.builds, report.runs);
  if (options.post) report.posted = PostMeasured(config, prober.TakeMeasured(), &report.warnings);
  return report;
}

}  // namespace perfwarden::local_bisect
