// SPDX-License-Identifier: Apache-2.0
#include "runner/local_bisect/bisect_probe.h"

#include <algorithm>

#include "core/version.h"
#include "runner/client/spool.h"
#include "runner/run/process.h"
#include "runner/run/session.h"
#include "runner/run/suites.h"
#include "runner/run/upload.h"
#include "runner/telemetry/host.h"

namespace perfwarden::local_bisect {
namespace {

namespace fs = std::filesystem;

// Repetitions per commit per round of a measurement: small, so that the commits alternate
// often (this VM's speed moves by tens of percent within minutes), not 1, so that a suite's
// start-up is not paid for every sample.
constexpr int kPerRound = 2;

std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const std::size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// The first line of a build log that says "error" (a compiler's diagnosis), else the last.
std::string ErrorLine(const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, nl - at);
    if (line.find("error") != std::string::npos) return line;
    at = nl + 1;
  }
  return LastLine(text);
}

}  // namespace

Prober::Prober(const config::RunnerConfig& config, ProbeSpec spec, const git::Repository& repo,
               fs::path root)
    : config_(config), spec_(std::move(spec)), repo_(repo), root_(std::move(root)) {
  relative_ = fs::relative(config.base_dir, repo.WorkDir());
  config_name_ =
      config.config_file.empty() ? fs::path("perfwarden.yaml") : config.config_file.filename();
  suite_name_ = spec_.suite;
  metric_ = spec_.metric;
}

Result<bisect::Measurement> Prober::Measure(const std::vector<git::CommitInfo>& commits,
                                            int repetitions) {
  bisect::Measurement m;
  m.results.resize(commits.size());
  for (int done = 0; done < repetitions; done += kPerRound) {
    for (std::size_t t = 0; t < commits.size(); ++t) {
      Tree& tree = trees_[commits[t].sha];
      if (tree.skipped) continue;
      auto measured = MeasureOnce(commits[t], std::min(kPerRound, repetitions - done), tree,
                                  m.results[t].samples);
      if (!measured) return tl::unexpected(measured.error());
    }
  }
  for (std::size_t t = 0; t < commits.size(); ++t) {
    const Tree& tree = trees_[commits[t].sha];
    m.results[t].skipped = tree.skipped;
    m.results[t].note = tree.note;
  }
  m.suite = suite_name_;
  m.metric = metric_;
  // The metric's direction comes from perfwarden.yaml's rules, else the metric's kind.
  m.direction =
      config_.Resolve(suite_name_, spec_.benchmarks.front(), metric_)
          .direction.value_or(metric_ == "items_per_second" || metric_ == "bytes_per_second"
                                  ? Direction::kHigherIsBetter
                                  : Direction::kLowerIsBetter);
  return m;
}

Result<void> Prober::MeasureOnce(const git::CommitInfo& commit, int repetitions, Tree& tree,
                                 std::vector<double>& out) {
  const std::string& sha = commit.sha;
  const std::string name = sha.substr(0, 12);
  const fs::path dir = root_ / name;
  const bool fresh = !fs::exists(dir);
  if (fresh) {
    if (auto exported = repo_.ExportTree(sha, dir.string()); !exported) {
      return tl::unexpected(exported.error());
    }
    if (!spec_.build.empty()) {
      ++builds_;
      run::ProcessOptions build;
      build.argv = {"/bin/sh", "-c", spec_.build};
      build.cwd = dir;
      build.output_file = root_ / (name + "-build.log");
      auto built = run::RunProcess(build);
      if (!built) return tl::unexpected(built.error());
      if (built->exit_code != 0) {
        tree.skipped = true;
        tree.note = "build failed (exit " + std::to_string(built->exit_code) +
                    "): " + ErrorLine(run::FileTail(build.output_file, 4000));
        return {};
      }
    }
  }
  auto probe_config = config::LoadRunnerConfig((dir / relative_ / config_name_).string());
  if (!probe_config) {
    tree.skipped = true;
    tree.note = "no usable perfwarden.yaml: " + probe_config.error().message;
    return {};
  }
  const config::Suite* suite = FindSuite(*probe_config);
  if (suite == nullptr) {
    tree.skipped = true;
    tree.note = "no suite with " + spec_.benchmarks.front() + " in its perfwarden.yaml";
    return {};
  }
  suite_name_ = suite->name;
  if (metric_.empty())
    metric_ = suite->type == config::SuiteType::kCommand ? "wall_time" : "real_time";
  const fs::path work = root_ / (name + "-work");
  fs::create_directories(work);
  run::SuiteOptions options;
  options.repetitions = repetitions;
  if (suite->type == config::SuiteType::kGbench) {
    options.benchmarks = {spec_.benchmarks.begin(), spec_.benchmarks.end()};
  }
  options.work_dir = work;
  options.skip_build = !fresh;
  ++runs_;
  auto outcome = run::RunSuite(*probe_config, *suite, options, [](const std::string&) {});
  if (!outcome) {
    tree.skipped = true;
    tree.note = "the suite failed: " + LastLine(outcome.error().message);
    return {};
  }
  Measured& measured = measured_[sha];
  measured.commit = commit;
  for (const wire::ResultSeries& s : outcome->series) {
    if (s.key.metric != metric_) continue;
    if (std::find(spec_.benchmarks.begin(), spec_.benchmarks.end(), s.key.benchmark) ==
        spec_.benchmarks.end()) {
      continue;
    }
    if (s.key.benchmark == spec_.benchmarks.front()) {
      out.insert(out.end(), s.values.begin(), s.values.end());
    }
    auto [series, fresh_series] = measured.series.try_emplace(s.key.benchmark, s);
    if (!fresh_series) {
      series->second.values.insert(series->second.values.end(), s.values.begin(), s.values.end());
    }
  }
  return {};
}

const config::Suite* Prober::FindSuite(const config::RunnerConfig& config) const {
  if (!spec_.suite.empty()) return config.FindSuite(spec_.suite);
  // A command suite is its own benchmark; a gbench suite is found by its name or filter at run
  // time, so the only gbench suite (or the one named like the benchmark) is taken.
  const config::Suite* only_gbench = nullptr;
  int gbench = 0;
  for (const config::Suite& s : config.suites) {
    if (s.name == spec_.benchmarks.front()) return &s;
    if (s.type == config::SuiteType::kGbench) {
      only_gbench = &s;
      ++gbench;
    }
  }
  return gbench == 1 ? only_gbench : nullptr;
}

int PostMeasured(const config::RunnerConfig& config,
                 const std::map<std::string, Prober::Measured>& measured_commits,
                 std::vector<std::string>* warnings) {
  if (config.server.url.empty() || config.server.token.empty()) return 0;
  auto spool = client::Spool::Open(config.spool_dir.string());
  if (!spool) {
    warnings->push_back("measurements not posted: " + spool.error().message);
    return 0;
  }
  const std::string fingerprint = run::TestbedFingerprint(telemetry::CaptureHost());
  int spooled = 0;
  for (const auto& [sha, measured] : measured_commits) {
    if (measured.series.empty()) continue;
    auto id = run::NewRunId();
    if (!id) continue;
    const git::CommitInfo& c = measured.commit;
    wire::RunUpload upload;
    upload.id = *id;
    upload.project = config.server.project;
    upload.branch = "perfwarden-bisect";
    upload.commit = {c.sha, c.parents, c.time, c.subject, c.author};
    upload.testbed = {config.testbed, fingerprint};
    upload.started_at = upload.finished_at = run::NowRfc3339();
    upload.runner_version = std::string(Version());
    for (const auto& [benchmark, series] : measured.series) upload.results.push_back(series);
    if (auto put = spool->Put(upload.id, wire::EncodeRunUpload(upload)); put) ++spooled;
  }
  if (spooled == 0) return 0;
  auto pushed = run::PushSpool(config);
  if (!pushed) {
    warnings->push_back(std::to_string(spooled) +
                        " measured commits kept in the spool (the server could not take them: " +
                        pushed.error().message + "); `perfwarden push` sends them");
    return 0;
  }
  return spooled;
}

}  // namespace perfwarden::local_bisect
