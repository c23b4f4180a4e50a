// Judging a run against its baseline, and the verdict's life cycle (compute, store, read,
// replay). docs/api.md ("Verdicts") documents the object built here.
#include "server/gate/verdict.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <tuple>

#include "judge/attribution.h"
#include "judge/judge.h"
#include "server/gate/results_writer.h"
#include "stats/descriptive.h"

namespace perfgate::server::gate {
namespace {

using nlohmann::json;

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
  return {{"commit", b.commit_sha}, {"branch", b.branch},       {"testbed", b.testbed},
          {"run_ids", b.run_ids},   {"selection", b.selection}, {"distance", b.distance}};
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

  const judge::Attributions notes = judge::Attribute(judge::AttributionInputs(*judged));
  ResultsWriter writer;
  for (size_t i = 0; i < judged->rows.size(); ++i) {
    const judge::Row& row = judged->rows[i];
    const judge::Series& set = *row.contender;
    const stats::MetricVerdict* v = judged->VerdictOf(row);
    writer.Open();
    // Keys in sorted order: "attribution" before "base", "environment" after "direction".
    if (notes.rows[i].attribution) {
      writer.Raw("attribution", AttributionJson(*notes.rows[i].attribution));
    }
    if (v != nullptr) {
      writer.Side("base", v->base);
    } else {
      writer.Null("base");
    }
    writer.String("benchmark", set.key.benchmark);
    if (v != nullptr) {
      writer.Number("change", v->change);
      writer.Interval("change_ci", v->change_ci);
      writer.Side("current", v->contender);
    } else {
      writer.Null("change");
      writer.Null("change_ci");
      // The current side of NEW and IGNORED series, for the report.
      writer.Side("current", {set.values.size(), stats::Median(set.values),
                              set.values.size() >= 2 ? stats::Cv(set.values) : NAN});
    }
    writer.String("direction", DirectionName(set.direction));
    if (!notes.rows[i].environment.empty()) {
      writer.String("environment", notes.rows[i].environment);
    }
    writer.String("metric", set.key.metric);
    if (v != nullptr) {
      writer.Number("p_adjusted", v->p_adjusted);
      writer.Number("p_value", v->p_test);
      writer.String("reason", v->reason);
      writer.Integer("repetitions_needed", v->repetitions_needed);
    } else {
      writer.Null("p_adjusted");
      writer.Null("p_value");
      writer.String("reason", row.reason);
      writer.Integer("repetitions_needed", 0);
    }
    writer.String("suite", set.key.suite);
    writer.Number("threshold", row.threshold);
    writer.String("unit", set.unit);
    writer.String("verdict", judged->VerdictName(row));
    writer.Close();
  }
  out.results_json = writer.Finish();
  const stats::ComparisonVerdicts& counts = judged->verdicts;
  out.counts = {{"regression", counts.regressions}, {"improvement", counts.improvements},
                {"equivalent", counts.equivalent},  {"inconclusive", counts.inconclusive},
                {"ignored", judged->ignored},       {"new", judged->added}};
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
  json out = {{"id", stored.id},
              {"run_id", v.run_id},
              {"created_at", stored.created_at},
              {"outcome", v.outcome},
              {"algorithm_version", v.algorithm_version},
              {"parameters", json::parse(v.parameters_json, nullptr, false)},
              {"baseline", v.baseline_json.empty() ? json(nullptr)
                                                   : json::parse(v.baseline_json, nullptr, false)},
              {"contender_run_ids", v.contender_run_ids}};
  for (const char* key : {"commit", "branch", "testbed", "pr", "counts", "warnings"}) {
    out[key] = summary.contains(key) ? summary[key] : json(nullptr);
  }
  out["results"] = json::parse(v.results_json, nullptr, false);
  return out;
}

std::string VerdictBody(const store::StoredVerdict& stored) {
  const store::NewVerdict& v = stored.verdict;
  std::string out;
  out.reserve(v.results_json.size() + v.parameters_json.size() + v.summary_json.size() + 1024);
  out += "{\"verdict\":{\"id\":" + std::to_string(stored.id);
  out += ",\"run_id\":" + json(v.run_id).dump();
  out += ",\"created_at\":" + json(stored.created_at).dump();
  out += ",\"outcome\":" + json(v.outcome).dump();
  out += ",\"algorithm_version\":" + json(v.algorithm_version).dump();
  out += ",\"parameters\":" + v.parameters_json;
  out += ",\"baseline\":" + (v.baseline_json.empty() ? std::string("null") : v.baseline_json);
  out += ",\"contender_run_ids\":" + json(v.contender_run_ids).dump();
  // The summary object's members (commit, branch, testbed, pr, counts, warnings), spliced in.
  const size_t open = v.summary_json.find('{');
  const size_t close = v.summary_json.rfind('}');
  if (open != std::string::npos && close != std::string::npos && close > open + 1) {
    const std::string members = v.summary_json.substr(open + 1, close - open - 1);
    if (members.find_first_not_of(" \t\n") != std::string::npos) out += "," + members;
  }
  out += ",\"results\":" + v.results_json + "}}";
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
  json summary = {{"commit", run->summary.commit_sha},
                  {"branch", run->summary.branch},
                  {"testbed", run->summary.testbed},
                  {"pr", run->summary.pr ? json(*run->summary.pr) : json(nullptr)},
                  {"counts", judged->counts},
                  {"warnings", warnings}};
  verdict.summary_json = summary.dump();
  verdict.results_json = std::move(judged->results_json);
  auto stored = store_.SaveVerdict(project, verdict);
  if (!stored) return tl::unexpected(stored.error());
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

  const json original = json::parse(stored.results_json, nullptr, false);
  const json replayed = json::parse(judged->results_json, nullptr, false);
  json differences = json::array();
  if (judged->outcome != stored.outcome) {
    differences.push_back(
        {{"field", "outcome"}, {"stored", stored.outcome}, {"replayed", judged->outcome}});
  }
  if (!original.is_array() || original.size() != replayed.size()) {
    differences.push_back({{"field", "results"},
                           {"stored", original.is_array() ? original.size() : 0},
                           {"replayed", replayed.size()}});
  } else {
    for (size_t i = 0; i < original.size(); ++i) {
      for (const char* key : {"verdict", "change", "change_ci", "p_value", "p_adjusted"}) {
        const json a = original[i].value(key, json(nullptr));
        const json b = replayed[i].value(key, json(nullptr));
        if (a != b) {
          differences.push_back({{"field", "results[" + std::to_string(i) + "]." + key},
                                 {"benchmark", original[i].value("benchmark", "")},
                                 {"stored", a},
                                 {"replayed", b}});
        }
      }
    }
  }
  return json{{"verdict", VerdictJson(**latest)},
              {"replay",
               {{"matches", differences.empty()},
                {"algorithm_version", std::string(stats::kVerdictAlgorithmVersion)},
                {"stored_algorithm_version", stored.algorithm_version},
                {"differences", std::move(differences)}}}};
}

}  // namespace perfgate::server::gate
