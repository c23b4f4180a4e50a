#include "runner/cli/confirm.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/series_key.h"
#include "core/text.h"
#include "judge/judge.h"
#include "runner/git/git_repo.h"
#include "runner/run/suites.h"
#include "runner/run/temp_dir.h"
#include "stats/verdict.h"

namespace perfgate::cli {
namespace {

namespace fs = std::filesystem;

void Progress(const std::string& line) { std::fprintf(stderr, "perfgate: %s\n", line.c_str()); }

void Append(std::map<SeriesKey, std::vector<double>>& into, const run::SuiteOutcome& outcome) {
  for (const wire::ResultSeries& s : outcome.series) {
    auto& values = into[s.key];
    values.insert(values.end(), s.values.begin(), s.values.end());
  }
}

}  // namespace

Result<ConfirmReport> ConfirmRegressions(const config::RunnerConfig& config,
                                         const ConfirmOptions& options, wire::Verdict* verdict) {
  ConfirmReport report;
  std::map<std::string, std::set<std::string>> regressed;
  for (const wire::MetricResult& r : verdict->results) {
    if (r.kind == wire::ResultKind::kRegression) regressed[r.key.suite].insert(r.key.benchmark);
  }
  if (regressed.empty()) return report;
  if (!verdict->baseline || verdict->baseline->commit.empty()) {
    return InvalidArgument("the verdict names no baseline commit to confirm against");
  }
  const std::string base_commit = verdict->baseline->commit;

  auto repo = git::Repository::Open(config.base_dir.string());
  if (!repo) return tl::unexpected(repo.error());
  const fs::path root = repo->WorkDir();
  const fs::path relative = fs::relative(config.base_dir, root);
  const fs::path config_name = config.config_file.filename();

  auto tree = run::TempDir::Make(config.spool_dir.parent_path(), "confirm-");
  if (!tree) return tl::unexpected(tree.error());
  const fs::path checkout = tree->path() / "tree";
  Progress("confirming " + std::to_string(regressed.size()) + " suite(s) with regressions: " +
           "baseline " + base_commit.substr(0, 12) + " checked out in " + checkout.string());
  if (auto exported = repo->ExportTree(base_commit, checkout.string()); !exported) {
    return tl::unexpected(exported.error());
  }
  auto base_config = config::LoadRunnerConfig((checkout / relative / config_name).string());
  if (!base_config) {
    return MakeError(base_config.error().code,
                     "the baseline's perfgate.yaml: " + base_config.error().ToString());
  }

  std::map<SeriesKey, std::vector<double>> base_values, head_values;
  for (const auto& [suite_name, benchmarks] : regressed) {
    const config::Suite* base_suite = base_config->FindSuite(suite_name);
    const config::Suite* head_suite = config.FindSuite(suite_name);
    if (base_suite == nullptr || head_suite == nullptr) {
      return InvalidArgument("suite " + suite_name + " is not in both commits' perfgate.yaml");
    }
    const fs::path base_work = tree->path() / "work-base";
    const fs::path head_work = tree->path() / "work-head";
    fs::create_directories(base_work);
    fs::create_directories(head_work);
    for (int round = 0; round < options.rounds; ++round) {
      Progress("confirm " + suite_name + ": A/B round " + std::to_string(round + 1) + "/" +
               std::to_string(options.rounds));
      run::SuiteOptions base_options;
      base_options.repetitions = options.repetitions_per_round;
      base_options.benchmarks = benchmarks;
      base_options.work_dir = base_work;
      base_options.skip_build = round > 0;  // the baseline tree is built once
      const auto quiet = [](const std::string&) {};
      auto base = run::RunSuite(*base_config, *base_suite, base_options,
                                round == 0 ? run::ProgressLine(Progress) : quiet);
      if (!base) return MakeError(base.error().code, "baseline: " + base.error().message);
      run::SuiteOptions head_options = base_options;
      head_options.work_dir = head_work;
      head_options.skip_build = true;  // the pull request was built for `perfgate run`
      auto head = run::RunSuite(config, *head_suite, head_options, quiet);
      if (!head) return tl::unexpected(head.error());
      Append(base_values, *base);
      Append(head_values, *head);
    }
  }

  // Judge the regressed metrics again, side by side, with their thresholds; Holm across them.
  std::vector<judge::Series> base_side, head_side;
  for (const auto& [key, values] : base_values) {
    base_side.push_back({.key = key, .unit = "", .values = values});
  }
  std::vector<wire::MetricResult*> targets;  // the verdict's row of each head series
  for (wire::MetricResult& r : verdict->results) {
    if (r.kind != wire::ResultKind::kRegression) continue;
    auto h = head_values.find(r.key);
    if (h == head_values.end()) continue;
    judge::Series series{
        .key = r.key, .unit = r.unit, .direction = r.direction, .values = h->second};
    series.threshold = r.threshold.value_or(verdict->parameters.threshold);
    series.alpha = config.Resolve(r.key).alpha;
    head_side.push_back(std::move(series));
    targets.push_back(&r);
  }
  judge::JudgeOptions judge_options;
  judge_options.policy.threshold = verdict->parameters.threshold;
  auto judged = judge::JudgeSeries(base_side, head_side, judge_options);
  if (!judged) return tl::unexpected(judged.error());
  std::set<const wire::MetricResult*> judged_rows;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (judged->rows[i].kind == judge::RowKind::kJudged) judged_rows.insert(targets[i]);
  }
  for (const wire::MetricResult& r : verdict->results) {
    if (r.kind == wire::ResultKind::kRegression && judged_rows.count(&r) == 0) {
      report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": not measured again; kept");
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const stats::MetricVerdict* judged_verdict = judged->VerdictOf(judged->rows[i]);
    if (judged_verdict == nullptr) continue;  // not measured again at the baseline
    const stats::MetricVerdict& v = *judged_verdict;
    wire::MetricResult& r = *targets[i];
    ++report.checked;
    const std::string measured = SignedPercent(v.change) + " [" + SignedPercent(v.change_ci.lower) +
                                 ", " + SignedPercent(v.change_ci.upper) + "]";
    if (v.verdict == stats::Verdict::kRegression) {
      ++report.confirmed;
      report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": confirmed, " + measured +
                             " side by side");
      r.reason += "; confirmed by an interleaved A/B rerun against " + base_commit.substr(0, 12) +
                  ": " + measured;
      continue;
    }
    ++report.withdrawn;
    report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": not confirmed (" + measured +
                           ", " + std::string(stats::VerdictName(v.verdict)) + ")");
    r.kind = wire::ResultKind::kInconclusive;
    r.reason = "first measured " + (r.change ? SignedPercent(*r.change) : std::string("?")) +
               ", but an interleaved A/B rerun against " + base_commit.substr(0, 12) +
               " measured " + measured + " (" + std::string(stats::VerdictName(v.verdict)) +
               "): the machine's speed drifted between the runs, not the code";
    --verdict->counts.regression;
    ++verdict->counts.inconclusive;
  }
  if (verdict->outcome == wire::Outcome::kRegression && verdict->counts.regression == 0) {
    verdict->outcome = wire::Outcome::kPass;
  }
  if (report.withdrawn > 0) {
    verdict->warnings.push_back(std::to_string(report.withdrawn) +
                                " regression(s) of the server's verdict did not reproduce in an "
                                "interleaved A/B rerun on this machine and were withdrawn");
  }
  return report;
}

}  // namespace perfgate::cli
