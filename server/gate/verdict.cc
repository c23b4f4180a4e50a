// Judging a run against its baseline, and the verdict's life cycle (compute, store, read,
// replay). docs/api.md ("Verdicts") documents the object built here.
#include "server/gate/verdict.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <tuple>

#include "judge/attribution.h"
#include "judge/judge.h"
#include "server/gate/results_writer.h"
#include "stats/descriptive.h"
#include "stats/environment_shift.h"
#include "wire/verdict_keys.h"

namespace perfgate::server::gate {
namespace {

using nlohmann::json;
namespace keys = wire::keys;

// The order Judge writes a result's keys in: nlohmann's (sorted), as the stored verdicts have it.
constexpr std::array kResultOrder = {keys::result::kAttribution,
                                     keys::result::kBase,
                                     keys::result::kBenchmark,
                                     keys::result::kChange,
                                     keys::result::kChangeCi,
                                     keys::result::kCurrent,
                                     keys::result::kDirection,
                                     keys::result::kEnvironment,
                                     keys::result::kMetric,
                                     keys::result::kPAdjusted,
                                     keys::result::kPValue,
                                     keys::result::kReason,
                                     keys::result::kRepetitionsNeeded,
                                     keys::result::kSuite,
                                     keys::result::kThreshold,
                                     keys::result::kUnit,
                                     keys::result::kVerdict};
static_assert(std::ranges::is_sorted(kResultOrder));

// Whether a stored verdict answers this request: same algorithm, parameters, contender and
// baseline runs.
bool SameQuestion(const store::NewVerdict& stored, const VerdictRequest& request,
                  const std::vector<std::string>& contender_ids,
                  const std::vector<std::string>& baseline_ids) {
  return stored.algorithm_version == stats::kVerdictAlgorithmVersion &&
         stored.contender_run_ids == contender_ids && stored.baseline_run_ids == baseline_ids &&
         json::parse(stored.parameters_json, nullptr, false) == EncodeParameters(request);
}

json BaselineJson(const store::BaselineChoice& b) {
  return {{keys::baseline::kCommit, b.commit_sha},   {keys::baseline::kBranch, b.branch},
          {keys::baseline::kTestbed, b.testbed},     {keys::baseline::kRunIds, b.run_ids},
          {keys::baseline::kSelection, b.selection}, {keys::baseline::kDistance, b.distance}};
}

}  // namespace

Result<Judgement> Judge(const std::vector<store::SampleSet>& contender,
                        const PreparedBaseline* baseline, const VerdictRequest& request) {
  Judgement out;
  std::vector<judge::Series> current;
  current.reserve(contender.size());
  for (const store::SampleSet& set : contender) current.push_back(AsSeries(set));
  judge::JudgeOptions options;
  options.policy = request.policy;
  options.rules = request.rules;
  // Only what the verdict object reports (no Hodges-Lehmann, Cohen's d, other tests).
  options.outputs = stats::JudgeOutputs::kVerdictOnly;
  options.pair_by = judge::PairBy::kKeyAndUnit;
  options.order = judge::RowOrder::kContender;
  options.name = judge::StatsName::kSeries;
  std::optional<std::span<const judge::Series>> base;
  if (baseline != nullptr) base = baseline->series;
  auto judged = judge::JudgeSeries(base, current, options);
  if (!judged) return tl::unexpected(judged.error());

  // The baseline's series that this run did not measure: worth a line, not a verdict.
  if (baseline != nullptr && !judged->only_in_base.empty()) {
    std::vector<const judge::Series*> unmatched = judged->only_in_base;
    std::sort(unmatched.begin(), unmatched.end(),
              [](const judge::Series* a, const judge::Series* b) {
                return std::tie(a->key, a->unit) < std::tie(b->key, b->unit);
              });
    std::string names;
    for (size_t i = 0; i < unmatched.size() && i < 5; ++i) {
      names += (names.empty() ? "" : ", ") + unmatched[i]->key.benchmark + " " +
               unmatched[i]->key.metric;
    }
    out.warnings.push_back(std::to_string(unmatched.size()) +
                           " benchmark metric(s) of the baseline are not in this run: " + names +
                           (unmatched.size() > 5 ? ", ..." : ""));
  }

  // A drift of the machine between the sides moves the run's metrics together.
  if (baseline != nullptr) {
    std::vector<double> worse;
    for (const stats::MetricVerdict& v : judged->verdicts.metrics) {
      const double log_ratio = std::log1p(v.change);
      worse.push_back(v.direction == Direction::kHigherIsBetter ? -log_ratio : log_ratio);
    }
    stats::ShiftPolicy shift_policy;
    shift_policy.threshold = request.policy.threshold;
    const stats::ShiftEvidence shift = stats::DetectEnvironmentShift(worse, shift_policy);
    if (shift.shifted) {
      out.environment_shift =
          wire::EnvironmentShift{static_cast<int64_t>(shift.metrics), shift.median_change,
                                 shift.geomean_change, shift.same_sign_share, shift.reason};
      out.warnings.push_back("environment shift: " + shift.reason);
    }
  }

  const judge::Attributions notes = judge::Attribute(judge::AttributionInputs(*judged));
  ResultsWriter writer;
  for (size_t i = 0; i < judged->rows.size(); ++i) {
    const judge::Row& row = judged->rows[i];
    const judge::Series& set = *row.contender;
    const stats::MetricVerdict* v = judged->VerdictOf(row);
    writer.Open();
    // Keys in sorted order: "attribution" before "base", "environment" after "direction".
    if (notes.rows[i].attribution) {
      writer.Raw(keys::result::kAttribution, AttributionJson(*notes.rows[i].attribution));
    }
    if (v != nullptr) {
      writer.Side(keys::result::kBase, v->base);
    } else {
      writer.Null(keys::result::kBase);
    }
    writer.String(keys::result::kBenchmark, set.key.benchmark);
    if (v != nullptr) {
      writer.Number(keys::result::kChange, v->change);
      writer.Interval(keys::result::kChangeCi, v->change_ci);
      writer.Side(keys::result::kCurrent, v->contender);
    } else {
      writer.Null(keys::result::kChange);
      writer.Null(keys::result::kChangeCi);
      // The current side of NEW and IGNORED series, for the report.
      writer.Side(keys::result::kCurrent, {set.values.size(), stats::Median(set.values),
                                           set.values.size() >= 2 ? stats::Cv(set.values) : NAN});
    }
    writer.String(keys::result::kDirection, DirectionName(set.direction));
    if (!notes.rows[i].environment.empty()) {
      writer.String(keys::result::kEnvironment, notes.rows[i].environment);
    }
    writer.String(keys::result::kMetric, set.key.metric);
    if (v != nullptr) {
      writer.Number(keys::result::kPAdjusted, v->p_adjusted);
      writer.Number(keys::result::kPValue, v->p_test);
      writer.String(keys::result::kReason, v->reason);
      writer.Integer(keys::result::kRepetitionsNeeded, v->repetitions_needed);
    } else {
      writer.Null(keys::result::kPAdjusted);
      writer.Null(keys::result::kPValue);
      writer.String(keys::result::kReason, row.reason);
      writer.Integer(keys::result::kRepetitionsNeeded, 0);
    }
    writer.String(keys::result::kSuite, set.key.suite);
    writer.Number(keys::result::kThreshold, row.threshold);
    writer.String(keys::result::kUnit, set.unit);
    writer.String(keys::result::kVerdict, judged->VerdictName(row));
    writer.Close();
  }
  out.results_json = writer.Finish();
  const stats::ComparisonVerdicts& counts = judged->verdicts;
  out.counts = {{keys::counts::kRegression, counts.regressions},
                {keys::counts::kImprovement, counts.improvements},
                {keys::counts::kEquivalent, counts.equivalent},
                {keys::counts::kInconclusive, counts.inconclusive},
                {keys::counts::kIgnored, judged->ignored},
                {keys::counts::kNew, judged->added}};
  if (baseline == nullptr) {
    out.outcome = "no_baseline";
  } else {
    // Regressions that a throttled host explains, all of them: the run must be repeated, not
    // fixed. One regression on a healthy suite still makes it a regression.
    out.outcome = counts.regressions == 0   ? "pass"
                  : notes.noisy_environment ? "noisy_environment"
                                            : "regression";
  }
  return out;
}

json VerdictJson(const store::StoredVerdict& stored) {
  const store::NewVerdict& v = stored.verdict;
  json summary = json::parse(v.summary_json, nullptr, false);
  if (!summary.is_object()) summary = json::object();
  json out = {
      {keys::verdict::kId, stored.id},
      {keys::verdict::kRunId, v.run_id},
      {keys::verdict::kCreatedAt, stored.created_at},
      {keys::verdict::kOutcome, v.outcome},
      {keys::verdict::kAlgorithmVersion, v.algorithm_version},
      {keys::verdict::kParameters, json::parse(v.parameters_json, nullptr, false)},
      {keys::verdict::kBaseline,
       v.baseline_json.empty() ? json(nullptr) : json::parse(v.baseline_json, nullptr, false)},
      {keys::verdict::kContenderRunIds, v.contender_run_ids}};
  for (std::string_view key :
       {keys::verdict::kCommit, keys::verdict::kBranch, keys::verdict::kTestbed, keys::verdict::kPr,
        keys::verdict::kCounts, keys::verdict::kWarnings}) {
    out[key] = summary.contains(key) ? summary[key] : json(nullptr);
  }
  for (std::string_view key :
       {keys::verdict::kEnvironmentShift, keys::verdict::kPaired, keys::verdict::kRunnerVersion}) {
    if (summary.contains(key)) out[key] = summary[key];
  }
  out[keys::verdict::kResults] = json::parse(v.results_json, nullptr, false);
  return out;
}

std::string VerdictBody(const store::StoredVerdict& stored) {
  const store::NewVerdict& v = stored.verdict;
  std::string out;
  out.reserve(v.results_json.size() + v.parameters_json.size() + v.summary_json.size() + 1024);
  AppendJsonKey(out, "{", keys::verdict::kEnvelope);
  AppendJsonKey(out, "{", keys::verdict::kId);
  out += std::to_string(stored.id);
  AppendJsonKey(out, ",", keys::verdict::kRunId);
  out += json(v.run_id).dump();
  AppendJsonKey(out, ",", keys::verdict::kCreatedAt);
  out += json(stored.created_at).dump();
  AppendJsonKey(out, ",", keys::verdict::kOutcome);
  out += json(v.outcome).dump();
  AppendJsonKey(out, ",", keys::verdict::kAlgorithmVersion);
  out += json(v.algorithm_version).dump();
  AppendJsonKey(out, ",", keys::verdict::kParameters);
  out += v.parameters_json;
  AppendJsonKey(out, ",", keys::verdict::kBaseline);
  out += v.baseline_json.empty() ? std::string_view("null") : std::string_view(v.baseline_json);
  AppendJsonKey(out, ",", keys::verdict::kContenderRunIds);
  out += json(v.contender_run_ids).dump();
  // The summary object's members (commit, branch, testbed, pr, counts, warnings and, when the
  // metrics moved together, environment_shift; a paired verdict's "paired"), spliced in.
  const size_t open = v.summary_json.find('{');
  const size_t close = v.summary_json.rfind('}');
  if (open != std::string::npos && close != std::string::npos && close > open + 1) {
    const std::string members = v.summary_json.substr(open + 1, close - open - 1);
    if (members.find_first_not_of(" \t\n") != std::string::npos) out += "," + members;
  }
  AppendJsonKey(out, ",", keys::verdict::kResults);
  out += v.results_json;
  out += "}}";
  return out;
}

Result<std::string> VerdictService::Compute(const store::Project& project,
                                            const std::string& run_id,
                                            const VerdictRequest& request, bool* reused) {
  if (reused != nullptr) *reused = false;
  auto run = store_.GetRunContext(project, run_id);
  if (!run) return tl::unexpected(run.error());
  std::vector<std::string> contender_ids = {run_id};
  for (size_t i = 0; i < request.contender_runs.size(); ++i) {
    const std::string& id = request.contender_runs[i];
    if (id == run_id) continue;
    const std::string field = "contender_runs[" + std::to_string(i) + "]";
    auto other = store_.GetRunContext(project, id);
    if (!other) return InvalidArgument(other.error().message, field);
    if (other->summary.commit_sha != run->summary.commit_sha ||
        other->summary.testbed_id != run->summary.testbed_id) {
      return InvalidArgument("run " + id + " is not of the same commit and testbed as run " +
                                 run_id + ", so it cannot be pooled with it",
                             field);
    }
    contender_ids.push_back(id);
  }
  std::string why_none;
  auto baseline = store_.FindBaseline(project, *run, &why_none);
  if (!baseline) return tl::unexpected(baseline.error());
  // The same question asked again (a retried CI job, a second gate on one run): when nothing
  // it depends on changed, the stored answer is the answer; judging is deterministic.
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  // (Without a baseline there is little to save, and why there is none may have changed.)
  if (*latest && *baseline &&
      SameQuestion((*latest)->verdict, request, contender_ids, (*baseline)->run_ids)) {
    if (reused != nullptr) *reused = true;
    return VerdictBody(**latest);
  }
  auto contender = store_.GetSampleSets(project, contender_ids);
  if (!contender) return tl::unexpected(contender.error());
  std::shared_ptr<const PreparedBaseline> base_sets;
  if (*baseline) {
    auto sets = LoadBaseline(project, (*baseline)->run_ids);
    if (!sets) return tl::unexpected(sets.error());
    base_sets = std::move(*sets);
  }
  auto judged = Judge(*contender, base_sets.get(), request);
  if (!judged) return tl::unexpected(judged.error());

  std::vector<std::string> warnings;
  if (!*baseline) {
    warnings.push_back("no baseline: " + why_none);
  } else if ((*baseline)->selection == "ancestor" && (*baseline)->distance > 0) {
    warnings.push_back(
        "the merge-base has no results on this testbed; the baseline is its "
        "first-parent ancestor " +
        (*baseline)->commit_sha.substr(0, 12) + ", " + std::to_string((*baseline)->distance) +
        " commit(s) older");
  }
  warnings.insert(warnings.end(), judged->warnings.begin(), judged->warnings.end());

  store::NewVerdict verdict;
  verdict.run_id = run_id;
  verdict.contender_run_ids = contender_ids;
  if (*baseline) verdict.baseline_run_ids = (*baseline)->run_ids;
  verdict.outcome = judged->outcome;
  verdict.algorithm_version = std::string(stats::kVerdictAlgorithmVersion);
  verdict.parameters_json = EncodeParameters(request).dump();
  if (*baseline) verdict.baseline_json = BaselineJson(**baseline).dump();
  json summary = {{keys::verdict::kCommit, run->summary.commit_sha},
                  {keys::verdict::kBranch, run->summary.branch},
                  {keys::verdict::kTestbed, run->summary.testbed},
                  {keys::verdict::kPr, run->summary.pr ? json(*run->summary.pr) : json(nullptr)},
                  {keys::verdict::kCounts, judged->counts},
                  {keys::verdict::kWarnings, warnings}};
  if (!run->summary.runner_version.empty()) {
    summary[keys::verdict::kRunnerVersion] = run->summary.runner_version;
  }
  if (judged->environment_shift) {
    summary[keys::verdict::kEnvironmentShift] =
        wire::EncodeEnvironmentShift(*judged->environment_shift);
  }
  verdict.summary_json = summary.dump();
  verdict.results_json = std::move(judged->results_json);
  auto stored = store_.SaveVerdict(project, verdict);
  if (!stored) return tl::unexpected(stored.error());
  if (stored->reused && reused != nullptr) *reused = true;
  return VerdictBody(*stored);
}

Result<std::shared_ptr<const PreparedBaseline>> VerdictService::LoadBaseline(
    const store::Project& project, const std::vector<std::string>& run_ids) {
  return baselines_.Get(project.id, run_ids,
                        [&]() { return store_.GetSampleSets(project, run_ids); });
}

void VerdictService::WarmBaselineAfterIngest(const store::Project& project,
                                             const std::string& run_id) {
  std::lock_guard lock(warm_mutex_);
  if (warm_stopped_) return;
  if (warm_queue_.size() >= kWarmQueue) warm_queue_.pop_front();
  warm_queue_.emplace_back(project, run_id);
  if (!warm_thread_.joinable()) warm_thread_ = std::thread([this] { WarmLoop(); });
  warm_changed_.notify_one();
}

void VerdictService::StopWarming() {
  {
    std::lock_guard lock(warm_mutex_);
    warm_stopped_ = true;
    warm_queue_.clear();
  }
  warm_changed_.notify_all();
  if (warm_thread_.joinable()) warm_thread_.join();
}

void VerdictService::WarmLoop() {
  while (true) {
    std::pair<store::Project, std::string> next;
    {
      std::unique_lock lock(warm_mutex_);
      warm_changed_.wait(lock, [this] { return warm_stopped_ || !warm_queue_.empty(); });
      if (warm_stopped_) return;
      next = std::move(warm_queue_.front());
      warm_queue_.pop_front();
    }
    try {
      Warm(next.first, next.second);
    } catch (const std::exception&) {  // bad_alloc: the gate prepares on demand instead
    }
  }
}

void VerdictService::Warm(const store::Project& project, const std::string& run_id) {
  auto run = store_.GetRunContext(project, run_id);
  if (!run) return;
  if (!run->target_branch.empty() && run->target_branch != run->summary.branch) return;  // a PR
  // The question a pull request branched at this commit asks: its merge-base is this commit,
  // on this branch and testbed; no run of its own is excluded (the nil id matches none).
  store::RunContext pull_request;
  pull_request.summary = run->summary;
  pull_request.summary.id = "00000000-0000-0000-0000-000000000000";
  pull_request.summary.branch.clear();
  pull_request.summary.commit_sha.clear();
  pull_request.target_branch = run->summary.branch;
  pull_request.merge_base = run->summary.commit_sha;
  auto choice = store_.FindBaseline(project, pull_request, nullptr);
  if (!choice || !*choice || (*choice)->commit_sha != run->summary.commit_sha) return;
  (void)LoadBaseline(project, (*choice)->run_ids);
}

Result<std::string> VerdictService::Latest(const store::Project& project,
                                           const std::string& run_id) {
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  if (*latest) return VerdictBody(**latest);
  if (auto run = store_.GetRunContext(project, run_id); !run) return tl::unexpected(run.error());
  return MakeError(ErrorCode::kNotFound,
                   "run " + run_id +
                       " has no verdict yet: POST .../verdict (ingest scope) "
                       "computes one",
                   "id");
}

Result<json> VerdictService::Replay(const store::Project& project, const std::string& run_id) {
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  if (!*latest) {
    // Tell a missing run apart from a run without a verdict.
    if (auto run = store_.GetRunContext(project, run_id); !run) return tl::unexpected(run.error());
    return MakeError(ErrorCode::kNotFound, "run " + run_id + " has no verdict to replay", "id");
  }
  const store::NewVerdict& stored = (*latest)->verdict;
  if (!stored.measurement_json.empty()) return ReplayPaired(project, **latest);
  auto request = DecodeParameters(json::parse(stored.parameters_json, nullptr, false));
  if (!request) return tl::unexpected(request.error());
  auto contender = store_.GetSampleSets(project, stored.contender_run_ids);
  if (!contender) return tl::unexpected(contender.error());
  std::shared_ptr<const PreparedBaseline> base_sets;
  if (!stored.baseline_run_ids.empty()) {
    auto sets = LoadBaseline(project, stored.baseline_run_ids);
    if (!sets) return tl::unexpected(sets.error());
    base_sets = std::move(*sets);
  }
  auto judged = Judge(*contender, base_sets.get(), *request);
  if (!judged) return tl::unexpected(judged.error());

  return ReplayAnswer(**latest, stats::kVerdictAlgorithmVersion, judged->outcome,
                      judged->results_json);
}

json ReplayAnswer(const store::StoredVerdict& verdict, std::string_view algorithm_version,
                  const std::string& outcome, const std::string& results_json) {
  const store::NewVerdict& stored = verdict.verdict;
  const json original = json::parse(stored.results_json, nullptr, false);
  const json replayed = json::parse(results_json, nullptr, false);
  json differences = json::array();
  if (outcome != stored.outcome) {
    differences.push_back(
        {{"field", keys::verdict::kOutcome}, {"stored", stored.outcome}, {"replayed", outcome}});
  }
  if (!original.is_array() || original.size() != replayed.size()) {
    differences.push_back({{"field", keys::verdict::kResults},
                           {"stored", original.is_array() ? original.size() : 0},
                           {"replayed", replayed.size()}});
  } else {
    for (size_t i = 0; i < original.size(); ++i) {
      for (std::string_view key :
           {keys::result::kVerdict, keys::result::kChange, keys::result::kChangeCi,
            keys::result::kPValue, keys::result::kPAdjusted}) {
        const json a = original[i].value(key, json(nullptr));
        const json b = replayed[i].value(key, json(nullptr));
        if (a != b) {
          differences.push_back({{"field", std::string(keys::verdict::kResults) + "[" +
                                               std::to_string(i) + "]." + std::string(key)},
                                 {"benchmark", original[i].value(keys::result::kBenchmark, "")},
                                 {"stored", a},
                                 {"replayed", b}});
        }
      }
    }
  }
  return json{{"verdict", VerdictJson(verdict)},
              {"replay",
               {{"matches", differences.empty()},
                {"algorithm_version", std::string(algorithm_version)},
                {"stored_algorithm_version", stored.algorithm_version},
                {"differences", std::move(differences)}}}};
}

}  // namespace perfgate::server::gate
