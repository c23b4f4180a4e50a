#include "runner/cli/bisect_run.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "runner/bisect/search.h"
#include "runner/cli/session.h"
#include "runner/cli/temp_dir.h"
#include "runner/client/spool.h"
#include "runner/git/git_repo.h"
#include "runner/run/process.h"
#include "runner/run/suites.h"
#include "runner/run/upload.h"
#include "runner/telemetry/host.h"
#include "stats/bootstrap.h"
#include "stats/descriptive.h"

namespace perfgate::cli {
namespace {

namespace fs = std::filesystem;
using bisect::Mark;
using nlohmann::json;

void Progress(const std::string& line) { std::fprintf(stderr, "perfgate: %s\n", line.c_str()); }

std::string Percent(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", 100 * x);
  return text;
}

// One position of the range: its commit and what was measured there.
struct Point {
  git::CommitInfo commit;
  Mark mark = Mark::kUnmeasured;
  std::map<std::string, std::vector<double>> samples;  // by benchmark
  // What this session measured, as series (unit, direction), for posting to the server.
  std::map<std::string, wire::ResultSeries> measured;
  std::string note;  // why skipped or unknown
};

// Everything a later `perfgate bisect` with the same arguments needs to continue.
class State {
 public:
  State(fs::path path, json identity) : path_(std::move(path)), identity_(std::move(identity)) {}

  // Loads the points of an earlier run with the same identity; false when there is none.
  bool Load(std::vector<Point>& points, int* builds, int* runs) const {
    std::ifstream in(path_);
    if (!in) return false;
    const json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("identity", json()) != identity_) {
      Progress("ignoring " + path_.string() + ": it is not a state of this bisect");
      return false;
    }
    for (const json& p : j.value("points", json::array())) {
      const std::size_t position = p.value("position", std::size_t{0});
      if (position >= points.size() || p.value("sha", "") != points[position].commit.sha) continue;
      Point& point = points[position];
      const std::string mark = p.value("mark", "unmeasured");
      for (Mark m : {Mark::kGood, Mark::kBad, Mark::kSkip, Mark::kUnknown}) {
        if (bisect::MarkName(m) == mark) point.mark = m;
      }
      point.samples = p.value("samples", std::map<std::string, std::vector<double>>{});
      point.note = p.value("note", "");
    }
    *builds = j.value("builds", 0);
    *runs = j.value("runs", 0);
    return true;
  }

  // Written to a temporary file and renamed, so that an interrupted write keeps the old state.
  void Save(const std::vector<Point>& points, int builds, int runs) const {
    json out = {{"identity", identity_}, {"builds", builds}, {"runs", runs}};
    json list = json::array();
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Point& p = points[i];
      if (p.mark == Mark::kUnmeasured && p.samples.empty()) continue;
      list.push_back({{"position", i},
                      {"sha", p.commit.sha},
                      {"mark", bisect::MarkName(p.mark)},
                      {"samples", p.samples},
                      {"note", p.note}});
    }
    out["points"] = std::move(list);
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

// Builds and measures commits in temporary trees, each tree built once per session.
class Prober {
 public:
  Prober(const config::RunnerConfig& config, const BisectOptions& options,
         const git::Repository& repo, fs::path root)
      : options_(options), repo_(repo), root_(std::move(root)) {
    const fs::path top = repo.WorkDir();
    relative_ = fs::relative(config.base_dir, top);
    config_name_ =
        config.config_file.empty() ? fs::path("perfgate.yaml") : config.config_file.filename();
  }

  int builds = 0;
  int runs = 0;

  // Adds `repetitions` more samples of every benchmark to `point` and returns them; a failing
  // build marks it SKIP (not an error) and returns nothing.
  using Samples = std::map<std::string, std::vector<double>>;
  Result<Samples> Measure(Point& point, int repetitions, std::string* suite_name,
                          std::string* metric) {
    const std::string& sha = point.commit.sha;
    const fs::path tree = root_ / sha.substr(0, 12);
    const bool fresh = built_.insert(sha).second;
    if (fresh) {
      if (auto exported = repo_.ExportTree(sha, tree.string()); !exported) {
        return tl::unexpected(exported.error());
      }
      if (!options_.build.empty()) {
        ++builds;
        run::ProcessOptions build;
        build.argv = {"/bin/sh", "-c", options_.build};
        build.cwd = tree;
        build.output_file = root_ / (sha.substr(0, 12) + "-build.log");
        auto built = run::RunProcess(build);
        if (!built) return tl::unexpected(built.error());
        if (built->exit_code != 0) {
          point.mark = Mark::kSkip;
          point.note = "build failed (exit " + std::to_string(built->exit_code) +
                       "): " + ErrorLine(run::FileTail(build.output_file, 4000));
          return Samples{};
        }
      }
    } else if (point.mark == Mark::kSkip) {
      return Samples{};
    }
    auto probe_config = config::LoadRunnerConfig((tree / relative_ / config_name_).string());
    if (!probe_config) {
      point.mark = Mark::kSkip;
      point.note = "no usable perfgate.yaml: " + probe_config.error().message;
      return Samples{};
    }
    const config::Suite* suite = FindSuite(*probe_config);
    if (suite == nullptr) {
      point.mark = Mark::kSkip;
      point.note = "no suite with " + options_.benchmarks.front() + " in its perfgate.yaml";
      return Samples{};
    }
    *suite_name = suite->name;
    if (metric->empty()) {
      *metric = suite->type == config::SuiteType::kCommand ? "wall_time" : "real_time";
    }
    const fs::path work = root_ / (sha.substr(0, 12) + "-work");
    fs::create_directories(work);
    run::SuiteOptions suite_options;
    suite_options.repetitions = repetitions;
    if (suite->type != config::SuiteType::kCommand) {
      suite_options.benchmarks = {options_.benchmarks.begin(), options_.benchmarks.end()};
    }
    suite_options.work_dir = work;
    suite_options.skip_build = !fresh;
    ++runs;
    auto outcome = run::RunSuite(*probe_config, *suite, suite_options, [](const std::string&) {});
    if (!outcome) {
      point.mark = Mark::kSkip;
      point.note = "the suite failed: " + LastLine(outcome.error().message);
      return Samples{};
    }
    Samples added;
    for (const wire::ResultSeries& s : outcome->series) {
      if (s.metric != *metric) continue;
      if (std::find(options_.benchmarks.begin(), options_.benchmarks.end(), s.benchmark) ==
          options_.benchmarks.end()) {
        continue;
      }
      auto& values = point.samples[s.benchmark];
      values.insert(values.end(), s.values.begin(), s.values.end());
      auto& new_values = added[s.benchmark];
      new_values.insert(new_values.end(), s.values.begin(), s.values.end());
      auto [series, fresh_series] = point.measured.try_emplace(s.benchmark, s);
      if (!fresh_series) {
        series->second.values.insert(series->second.values.end(), s.values.begin(), s.values.end());
      }
    }
    return added;
  }

 private:
  // The first line of a build log that says "error" (a compiler's diagnosis), else the last.
  static std::string ErrorLine(const std::string& text) {
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t nl = std::min(text.find('\n', at), text.size());
      const std::string line = text.substr(at, nl - at);
      if (line.find("error") != std::string::npos) return line;
      at = nl + 1;
    }
    return LastLine(text);
  }

  static std::string LastLine(const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    const std::size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
  }

  const config::Suite* FindSuite(const config::RunnerConfig& config) const {
    if (!options_.suite.empty()) return config.FindSuite(options_.suite);
    // A command suite is its own benchmark; a gbench suite is found by its name or filter at
    // run time, so the only gbench suite (or the one named like the benchmark) is taken.
    const config::Suite* only_gbench = nullptr;
    int gbench = 0;
    for (const config::Suite& s : config.suites) {
      if (s.name == options_.benchmarks.front()) return &s;
      if (s.type == config::SuiteType::kGbench) {
        only_gbench = &s;
        ++gbench;
      }
    }
    return gbench == 1 ? only_gbench : nullptr;
  }

  const BisectOptions& options_;
  const git::Repository& repo_;
  fs::path root_;
  fs::path relative_;
  fs::path config_name_;
  std::set<std::string> built_;
};

// Every commit measured this session becomes a run on the server (branch "perfgate-bisect", not
// a tracked branch, so the history of main is not reordered), spooled first so that nothing is
// lost when the server is away (`perfgate push` sends it later).
void PostMeasurements(const config::RunnerConfig& config, const BisectOptions& options,
                      const std::vector<Point>& points, BisectReport* report) {
  if (!options.post || config.server.url.empty() || config.server.token.empty()) return;
  auto spool = client::Spool::Open(config.spool_dir.string());
  if (!spool) {
    report->warnings.push_back("measurements not posted: " + spool.error().message);
    return;
  }
  const std::string fingerprint = run::TestbedFingerprint(telemetry::CaptureHost());
  int spooled = 0;
  for (const Point& point : points) {
    if (point.measured.empty()) continue;
    auto id = run::NewRunId();
    if (!id) continue;
    wire::RunUpload upload;
    upload.id = *id;
    upload.project = config.server.project;
    upload.branch = "perfgate-bisect";
    upload.commit = {point.commit.sha, point.commit.parents, point.commit.time,
                     point.commit.subject, point.commit.author};
    upload.testbed = {config.testbed, fingerprint};
    upload.started_at = upload.finished_at = run::NowRfc3339();
    for (const auto& [benchmark, series] : point.measured) upload.results.push_back(series);
    if (auto put = spool->Put(upload.id, wire::EncodeRunUpload(upload)); put) ++spooled;
  }
  if (spooled == 0) return;
  auto pushed = PushSpool(config);
  if (!pushed) {
    report->warnings.push_back(std::to_string(spooled) +
                               " measured commits kept in the spool (the server could not take "
                               "them: " +
                               pushed.error().message + "); `perfgate push` sends them");
    return;
  }
  report->posted = spooled;
}

}  // namespace

Result<BisectReport> RunBisect(const config::RunnerConfig& config, const BisectOptions& options) {
  if (options.benchmarks.empty()) return InvalidArgument("name a benchmark", "benchmark");
  if (options.repetitions < 2) return InvalidArgument("must be at least 2", "repetitions");
  if (options.max_repetitions < options.repetitions) {
    return InvalidArgument("must be at least --repetitions", "max-repetitions");
  }
  auto repo = git::Repository::Open(config.base_dir.string());
  if (!repo) return tl::unexpected(repo.error());
  auto good = repo->ResolveSha(options.good);
  if (!good) return tl::unexpected(good.error());
  auto bad = repo->ResolveSha(options.bad);
  if (!bad) return tl::unexpected(bad.error());
  auto range = repo->ListRange(*good, *bad, options.first_parent);
  if (!range) return tl::unexpected(range.error());
  if (range->empty()) return InvalidArgument("good and bad are the same commit", "bad");
  auto good_info = repo->Describe(*good);
  if (!good_info) return tl::unexpected(good_info.error());

  BisectReport report;
  report.good_sha = *good;
  report.bad_sha = *bad;
  report.benchmarks = options.benchmarks;
  report.metric = options.metric;
  report.commits = range->size();
  report.expected_probes = bisect::Search::ExpectedProbes(range->size());

  std::vector<Point> points(range->size() + 1);
  points[0].commit = *good_info;
  for (std::size_t i = 0; i < range->size(); ++i) points[i + 1].commit = (*range)[i];

  const json identity = {{"good", *good},
                         {"bad", *bad},
                         {"benchmarks", options.benchmarks},
                         {"metric", options.metric},
                         {"suite", options.suite},
                         {"build", options.build},
                         {"first_parent", options.first_parent}};
  fs::path state_path = options.state_file;
  if (state_path.empty()) {
    state_path = config.spool_dir.parent_path() /
                 ("bisect-" + good->substr(0, 12) + "-" + bad->substr(0, 12) + ".json");
  }
  const State state(state_path, identity);
  int builds = 0, runs = 0;
  report.resumed = state.Load(points, &builds, &runs);
  if (report.resumed) {
    Progress("resuming the bisect kept in " + state.path().string());
  }

  auto temp = TempDir::Make(config.spool_dir.parent_path(), "bisect-");
  if (!temp) return tl::unexpected(temp.error());
  Prober prober(config, options, *repo, temp->path());
  std::string suite_name = options.suite;
  std::string metric = options.metric;
  const std::string& first = options.benchmarks.front();
  auto save = [&] { state.Save(points, builds + prober.builds, runs + prober.runs); };

  // Measures the points `targets` `repetitions` times each, interleaved a few repetitions at a
  // time (as Pinpoint does), so that all of them see the same machine: this VM's speed moves by
  // tens of percent within minutes, and a probe judged against ends measured earlier would be
  // judged against the machine, not the code. Returns the first benchmark's new samples per
  // target; a target that does not build stops being measured (its mark says SKIP).
  constexpr int kPerRound = 2;
  using Paired = std::vector<std::vector<double>>;
  auto interleaved = [&](const std::vector<std::size_t>& targets,
                         int repetitions) -> Result<Paired> {
    Paired out(targets.size());
    for (int done = 0; done < repetitions; done += kPerRound) {
      for (std::size_t t = 0; t < targets.size(); ++t) {
        Point& point = points[targets[t]];
        if (point.mark == Mark::kSkip) continue;
        auto added = prober.Measure(point, kPerRound, &suite_name, &metric);
        if (!added) return tl::unexpected(added.error());
        auto it = added->find(first);
        if (it != added->end()) out[t].insert(out[t].end(), it->second.begin(), it->second.end());
      }
      save();
    }
    return out;
  };
  auto end_failed = [&](std::size_t end) -> tl::unexpected<Error> {
    return MakeError(ErrorCode::kUnavailable,
                     std::string(end == 0 ? "the good end " : "the bad end ") +
                         points[end].commit.sha.substr(0, 12) + ": " + points[end].note);
  };
  auto more = [](Paired& into, const Paired& from) {
    for (std::size_t i = 0; i < into.size(); ++i) {
      into[i].insert(into[i].end(), from[i].begin(), from[i].end());
    }
  };

  // The ends, side by side, until the regression shows between them (or the cap says it does
  // not). The metric's direction comes from perfgate.yaml's rules, else the metric's kind.
  Progress("bisecting " + std::to_string(range->size()) + " commits (" + good->substr(0, 12) +
           ".." + bad->substr(0, 12) + "), about " + std::to_string(report.expected_probes) +
           " steps");
  const std::size_t last = range->size();
  auto ends = interleaved({0, last}, options.repetitions);
  if (!ends) return tl::unexpected(ends.error());
  for (const std::size_t end : {std::size_t{0}, last}) {
    if (points[end].mark == Mark::kSkip) return end_failed(end);
  }
  const Direction direction =
      config.Resolve(suite_name, first, metric)
          .direction.value_or(metric == "items_per_second" || metric == "bytes_per_second"
                                  ? Direction::kHigherIsBetter
                                  : Direction::kLowerIsBetter);
  auto check_ends = [&] {
    return bisect::CheckEndpoints((*ends)[0], (*ends)[1], direction, options.threshold,
                                  options.alpha);
  };
  report.endpoints = check_ends();
  for (int n = options.repetitions; !report.endpoints.reproduced && n < options.max_repetitions &&
                                    std::fabs(report.endpoints.change) >= options.threshold &&
                                    IsWorse(report.endpoints.change, direction);
       n *= 2) {
    auto again = interleaved({0, last}, std::min(n, options.max_repetitions - n));
    if (!again) return tl::unexpected(again.error());
    more(*ends, *again);
    report.endpoints = check_ends();
  }
  report.suite = suite_name;
  report.metric = metric;
  Progress("ends: " + report.endpoints.reason);
  auto finish = [&] {
    report.builds = builds + prober.builds;
    report.runs = runs + prober.runs;
    save();
    PostMeasurements(config, options, points, &report);
  };
  if (!report.endpoints.reproduced) {
    report.warnings.push_back(
        "the regression does not reproduce between the ends on this "
        "machine: " +
        report.endpoints.reason);
    finish();
    return report;
  }

  // Searches, each over a window whose ends differ; a culprit that explains only part of the
  // change opens a new window on the side that still holds the rest.
  std::vector<std::pair<std::size_t, std::size_t>> windows = {{0, last}};
  int step = 0;
  while (!windows.empty() && static_cast<int>(report.culprits.size()) < options.max_culprits) {
    const auto [lo, hi] = windows.front();
    windows.erase(windows.begin());
    // The first window takes the marks of an earlier session; a later one judges against other
    // ends, so it keeps only what does not build.
    const bool first_window = lo == 0 && hi == last;
    bisect::Search search(hi - lo);
    for (std::size_t i = lo + 1; i < hi; ++i) {
      if (!first_window && points[i].mark != Mark::kSkip) points[i].mark = Mark::kUnmeasured;
      if (points[i].mark != Mark::kUnmeasured) search.Set(i - lo, points[i].mark);
    }
    while (auto next = search.Next()) {
      const std::size_t position = lo + *next;
      Point& point = points[position];
      ++step;
      bisect::Decision decision;
      auto paired = interleaved({lo, position, hi}, options.repetitions);
      if (!paired) return tl::unexpected(paired.error());
      for (int n = options.repetitions; point.mark != Mark::kSkip; n *= 2) {
        decision = bisect::Decide((*paired)[0], (*paired)[2], (*paired)[1], {options.alpha});
        if (decision.side != bisect::Side::kUnknown || n >= options.max_repetitions) break;
        Progress("  " + point.commit.sha.substr(0, 12) + ": undecided (" + decision.reason +
                 "); measuring " + std::to_string(std::min(2 * n, options.max_repetitions)) +
                 " repetitions");
        auto again = interleaved({lo, position, hi}, std::min(n, options.max_repetitions - n));
        if (!again) return tl::unexpected(again.error());
        more(*paired, *again);
      }
      if (points[lo].mark == Mark::kSkip || points[hi].mark == Mark::kSkip) {
        return end_failed(points[lo].mark == Mark::kSkip ? lo : hi);
      }
      if (point.mark != Mark::kSkip) {
        point.mark = decision.side == bisect::Side::kGood  ? Mark::kGood
                     : decision.side == bisect::Side::kBad ? Mark::kBad
                                                           : Mark::kUnknown;
        point.note = decision.reason;
      }
      search.Set(*next, point.mark);
      save();
      const std::vector<double>& s = (*paired)[1];
      report.probes.push_back({position, point.commit.sha, point.commit.subject,
                               static_cast<int>(s.size()), s.empty() ? 0 : stats::Median(s),
                               bisect::MarkName(point.mark), point.note});
      Progress("step " + std::to_string(step) + " of about " +
               std::to_string(report.expected_probes) + ": " + point.commit.sha.substr(0, 12) +
               " " + point.commit.subject + ": " + bisect::MarkName(point.mark) + " (" +
               point.note + ")");
    }
    const std::size_t first_bad = lo + search.FirstBad();
    const std::size_t last_good = lo + search.LastGood();
    Culprit culprit;
    const git::CommitInfo& c = points[first_bad].commit;
    culprit.sha = c.sha;
    culprit.author = c.author;
    culprit.subject = c.subject;
    culprit.exact = search.Exact();
    if (!culprit.exact) {
      for (std::size_t i = last_good + 1; i <= first_bad; ++i) {
        culprit.candidates.push_back(points[i].commit.sha);
      }
    }
    // The step itself, measured side by side: its size and CI, and what it leaves unexplained.
    Progress("measuring the step " + points[last_good].commit.sha.substr(0, 12) + " -> " +
             c.sha.substr(0, 12) + " side by side");
    auto step_pair = interleaved({last_good, first_bad}, 2 * options.repetitions);
    if (!step_pair) return tl::unexpected(step_pair.error());
    const std::vector<double>& before = (*step_pair)[0];
    const std::vector<double>& after = (*step_pair)[1];
    if (!before.empty() && !after.empty()) {
      culprit.magnitude = stats::Median(after) / stats::Median(before) - 1;
      const stats::Interval ci = stats::BootstrapMedianChangeCi(before, after, {});
      culprit.ci_low = ci.lower;
      culprit.ci_high = ci.upper;
    }
    culprit.share = report.endpoints.change != 0 ? culprit.magnitude / report.endpoints.change : 1;
    report.culprits.push_back(culprit);
    // What the culprits found so far explain together (their steps compound).
    double explained = 1;
    for (const Culprit& found : report.culprits) explained *= 1 + found.magnitude;
    const double share =
        report.endpoints.change != 0 ? (explained - 1) / report.endpoints.change : 1;
    if (share < options.explained_share) {
      // The rest may be another step on a side of this window whose two ends still differ.
      std::size_t found = 0;
      for (const auto& [a, b] : {std::pair{lo, last_good}, std::pair{first_bad, hi}}) {
        if (b <= a) continue;
        auto side = interleaved({a, b}, options.repetitions);
        if (!side) return tl::unexpected(side.error());
        const bisect::EndpointCheck rest = bisect::CheckEndpoints(
            (*side)[0], (*side)[1], direction, options.threshold / 2, options.alpha);
        if (rest.reproduced) {
          windows.push_back({a, b});
          ++found;
        }
      }
      const std::string who = report.culprits.size() == 1 ? c.sha.substr(0, 12) + " explains "
                                                          : std::string("the culprits explain ");
      if (found > 0) {
        report.warnings.push_back(who + Percent(share).substr(1) +
                                  " of the change between the ends; looking for another step");
      } else if (share < 0.7) {
        report.warnings.push_back(who + "only " + Percent(share).substr(1) +
                                  " of the change between the ends, and no other step shows on "
                                  "either side (the rest may be spread over many commits)");
      }
    }
  }
  finish();
  return report;
}

}  // namespace perfgate::cli
