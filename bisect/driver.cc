// SPDX-License-Identifier: Apache-2.0
#include "bisect/driver.h"

#include <algorithm>
#include <set>
#include <utility>

#include "bisect/search.h"
#include "core/text.h"
#include "stats/bootstrap.h"
#include "stats/descriptive.h"

namespace perfwarden::bisect {
namespace {

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

// The samples of one measurement's targets, in its request's order.
using Paired = std::vector<std::vector<double>>;

void Append(Paired& into, const Paired& from) {
  for (std::size_t i = 0; i < into.size() && i < from.size(); ++i) {
    into[i].insert(into[i].end(), from[i].begin(), from[i].end());
  }
}

// The state of one run of the algorithm over the log: marks per position and the log's cursor.
class Driver {
 public:
  Driver(const std::vector<CommitRef>& commits, const SearchOptions& options,
         std::vector<Measurement>* log, const MeasureFn& measure, const ProgressFn& progress)
      : commits_(commits),
        options_(options),
        log_(log),
        measure_(measure),
        progress_(progress),
        marks_(commits.size(), Mark::kUnmeasured),
        notes_(commits.size()) {}

  Result<Outcome> Run();

 private:
  void Say(const std::string& line) const {
    if (progress_) progress_(line);
  }

  // The next measurement: from the log while it lasts, then from `measure_`; without one, the
  // run stops here (pending_ says what it waits for).
  Result<Paired> Measure(const std::vector<std::size_t>& targets, int repetitions);
  tl::unexpected<Error> EndFailed(std::size_t end) const {
    return MakeError(ErrorCode::kUnavailable,
                     std::string(end == 0 ? "the good end " : "the bad end ") +
                         Short(commits_[end].sha) + ": " + notes_[end]);
  }
  Result<void> Search(std::size_t lo, std::size_t hi, bool first_window, int* step);
  // When the search is done but the window still holds commits left UNKNOWN at the cap (judged
  // against the ends of a wider window), each is probed once more, against the ends of the final
  // window: the nearest commits called good and bad. False when there is none left to retry.
  static bool Retry(bisect::Search& search, std::set<std::size_t>* retried);
  Result<void> MeasureCulprit(std::size_t lo, std::size_t hi, std::size_t last_good,
                              std::size_t first_bad, bool exact);
  // Commit `a` against commit `b`, side by side (CheckEndpoints at `threshold`). Undecided (the
  // interval of the change reaches the threshold, but the change is not a significant regression
  // of that size): the repetitions double up to the cap. `name` prefixes the progress lines.
  Result<EndpointCheck> Compare(std::size_t a, std::size_t b, double threshold,
                                const std::string& name);

  const std::vector<CommitRef>& commits_;
  const SearchOptions& options_;
  std::vector<Measurement>* log_;
  const MeasureFn& measure_;
  const ProgressFn& progress_;
  std::vector<Mark> marks_;
  std::vector<std::string> notes_;
  std::size_t cursor_ = 0;  // next measurement of the log
  bool context_known_ = false;
  Direction direction_ = Direction::kLowerIsBetter;
  std::optional<Request> pending_;
  Report report_;
  std::vector<std::pair<std::size_t, std::size_t>> windows_;
};

Result<Paired> Driver::Measure(const std::vector<std::size_t>& targets, int repetitions) {
  const Request request{targets, repetitions};
  const Measurement* m = nullptr;
  if (cursor_ < log_->size()) {
    m = &(*log_)[cursor_];
    if (!(m->request == request) || m->results.size() != targets.size()) {
      return InvalidArgument("measurement " + std::to_string(cursor_ + 1) +
                                 " of the log is not the one this bisect asks for (the log is "
                                 "of another bisect, or of another version of perfwarden)",
                             "log");
    }
  } else if (measure_) {
    auto made = measure_(request);
    if (!made) return tl::unexpected(made.error());
    if (made->results.size() != targets.size()) {
      return MakeError(ErrorCode::kInternal,
                       "a measurement returned " + std::to_string(made->results.size()) +
                           " results for " + std::to_string(targets.size()) + " targets");
    }
    made->request = request;
    log_->push_back(std::move(*made));
    m = &log_->back();
  } else {
    pending_ = request;
    return MakeError(ErrorCode::kUnavailable, "pending");
  }
  ++cursor_;
  if (!context_known_) {
    context_known_ = true;
    report_.suite = m->suite;
    report_.metric = m->metric;
    direction_ = m->direction;
  }
  Paired out(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const TargetResult& r = m->results[t];
    if (r.skipped) {
      marks_[targets[t]] = Mark::kSkip;
      notes_[targets[t]] = r.note;
    }
    out[t] = r.samples;
  }
  return out;
}

Result<Outcome> Driver::Run() {
  const std::size_t last = commits_.size() - 1;
  report_.good_sha = commits_.front().sha;
  report_.bad_sha = commits_.back().sha;
  report_.commits = last;
  report_.expected_probes = Search::ExpectedProbes(last);
  Outcome outcome;
  auto body = [&]() -> Result<bool> {
    Say("bisecting " + std::to_string(last) + " commits (" + Short(report_.good_sha) + ".." +
        Short(report_.bad_sha) + "), about " + std::to_string(report_.expected_probes) + " steps");
    // The ends, side by side, until the regression shows between them (or the cap says it
    // does not).
    auto ends = Compare(0, last, options_.threshold, "ends");
    if (!ends) return tl::unexpected(ends.error());
    for (const std::size_t end : {std::size_t{0}, last}) {
      if (marks_[end] == Mark::kSkip) return EndFailed(end);
    }
    report_.endpoints = *ends;
    Say("ends: " + report_.endpoints.reason);
    if (report_.endpoints.outcome == Reproduction::kNotReproduced) {
      report_.warnings.push_back(
          "the regression does not reproduce between the ends on this machine: " +
          report_.endpoints.reason);
      return true;
    }
    if (report_.endpoints.outcome == Reproduction::kUndecided) {
      const int needed = report_.endpoints.repetitions_needed;
      report_.warnings.push_back(
          "undecided: at the repetition cap the ends neither show the regression nor rule it "
          "out on this machine (" +
          report_.endpoints.reason + "); " +
          (needed > 0 ? "raise --max-repetitions to about " + std::to_string(needed) + ", or "
                      : std::string()) +
          "measure on a quieter machine");
      return true;
    }
    // Searches, each over a window whose ends differ; a culprit that explains only part of
    // the change opens a new window on the side that still holds the rest.
    windows_ = {{0, last}};
    int step = 0;
    while (!windows_.empty() && static_cast<int>(report_.culprits.size()) < options_.max_culprits) {
      const auto [lo, hi] = windows_.front();
      windows_.erase(windows_.begin());
      if (auto searched = Search(lo, hi, lo == 0 && hi == last, &step); !searched) {
        return tl::unexpected(searched.error());
      }
    }
    return true;
  };
  auto done = body();
  outcome.report = report_;
  outcome.report.measurements = cursor_;
  if (!done) {
    if (pending_) {
      outcome.pending = pending_;
      return outcome;
    }
    return tl::unexpected(done.error());
  }
  outcome.finished = true;
  return outcome;
}

Result<void> Driver::Search(std::size_t lo, std::size_t hi, bool first_window, int* step) {
  // A later window judges against other ends, so it keeps only what does not build.
  bisect::Search search(hi - lo);
  for (std::size_t i = lo + 1; i < hi; ++i) {
    if (!first_window && marks_[i] != Mark::kSkip) marks_[i] = Mark::kUnmeasured;
    if (marks_[i] != Mark::kUnmeasured) search.Set(i - lo, marks_[i]);
  }
  std::set<std::size_t> retried;
  while (true) {
    auto next = search.Next();
    if (!next && !Retry(search, &retried)) break;
    if (!next) continue;
    const std::size_t position = lo + *next;
    ++*step;
    Decision decision;
    auto paired = Measure({lo, position, hi}, options_.repetitions);
    if (!paired) return tl::unexpected(paired.error());
    for (int n = options_.repetitions; marks_[position] != Mark::kSkip; n *= 2) {
      decision = Decide((*paired)[0], (*paired)[2], (*paired)[1], {options_.alpha});
      if (decision.side != Side::kUnknown || n >= options_.max_repetitions) break;
      Say("  " + Short(commits_[position].sha) + ": undecided (" + decision.reason +
          "); measuring " + std::to_string(std::min(2 * n, options_.max_repetitions)) +
          " repetitions");
      auto again = Measure({lo, position, hi}, std::min(n, options_.max_repetitions - n));
      if (!again) return tl::unexpected(again.error());
      Append(*paired, *again);
    }
    if (marks_[lo] == Mark::kSkip || marks_[hi] == Mark::kSkip) {
      return EndFailed(marks_[lo] == Mark::kSkip ? lo : hi);
    }
    if (marks_[position] != Mark::kSkip) {
      marks_[position] = decision.side == Side::kGood  ? Mark::kGood
                         : decision.side == Side::kBad ? Mark::kBad
                                                       : Mark::kUnknown;
      notes_[position] = decision.reason;
    }
    search.Set(*next, marks_[position]);
    const std::vector<double>& s = (*paired)[1];
    const CommitRef& c = commits_[position];
    report_.probes.push_back({position, c.sha, c.subject, static_cast<int>(s.size()),
                              s.empty() ? 0 : stats::Median(s), MarkName(marks_[position]),
                              notes_[position]});
    Say("step " + std::to_string(*step) + " of about " + std::to_string(report_.expected_probes) +
        ": " + Short(c.sha) + " " + c.subject + ": " + MarkName(marks_[position]) + " (" +
        notes_[position] + ")");
    // A window opened for a further step was shown by one measurement of its ends: when a probe
    // stays UNKNOWN at the cap and the ends, measured with it, no longer differ, the window is
    // noise and stepping around every commit in it would only cost.
    if (!first_window && marks_[position] == Mark::kUnknown) {
      const EndpointCheck ends = CheckEndpoints((*paired)[0], (*paired)[2], direction_,
                                                options_.threshold / 2, options_.alpha);
      if (!ends.reproduced) {
        report_.warnings.push_back("the side " + Short(commits_[lo].sha) + ".." +
                                   Short(commits_[hi].sha) +
                                   " is not searched further: its ends, measured with " +
                                   Short(c.sha) + ", do not differ (" + ends.reason + ")");
        return {};
      }
    }
  }
  return MeasureCulprit(lo, hi, lo + search.LastGood(), lo + search.FirstBad(), search.Exact());
}

Result<EndpointCheck> Driver::Compare(std::size_t a, std::size_t b, double threshold,
                                      const std::string& name) {
  auto samples = Measure({a, b}, options_.repetitions);
  if (!samples) return tl::unexpected(samples.error());
  auto check = [&] {
    return CheckEndpoints((*samples)[0], (*samples)[1], direction_, threshold, options_.alpha);
  };
  EndpointCheck result = check();
  for (int n = options_.repetitions;
       result.outcome == Reproduction::kUndecided && n < options_.max_repetitions; n *= 2) {
    Say(name + ": " + result.reason + "; measuring " +
        std::to_string(std::min(2 * n, options_.max_repetitions)) + " repetitions");
    auto again = Measure({a, b}, std::min(n, options_.max_repetitions - n));
    if (!again) return tl::unexpected(again.error());
    Append(*samples, *again);
    result = check();
  }
  return result;
}

bool Driver::Retry(bisect::Search& search, std::set<std::size_t>* retried) {
  bool again = false;
  for (std::size_t i = search.LastGood() + 1; i < search.FirstBad(); ++i) {
    if (search.Get(i) == Mark::kUnknown && retried->insert(i).second) {
      search.Set(i, Mark::kUnmeasured);
      again = true;
    }
  }
  return again;
}

Result<void> Driver::MeasureCulprit(std::size_t lo, std::size_t hi, std::size_t last_good,
                                    std::size_t first_bad, bool exact) {
  const CommitRef& c = commits_[first_bad];
  Culprit culprit;
  culprit.sha = c.sha;
  culprit.author = c.author;
  culprit.subject = c.subject;
  culprit.exact = exact;
  if (!exact) {
    for (std::size_t i = last_good + 1; i <= first_bad; ++i) {
      culprit.candidates.push_back(commits_[i].sha);
    }
  }
  // The step itself, measured side by side: its size and CI, and what it leaves unexplained.
  Say("measuring the step " + Short(commits_[last_good].sha) + " -> " + Short(c.sha) +
      " side by side");
  auto pair = Measure({last_good, first_bad}, 2 * options_.repetitions);
  if (!pair) return tl::unexpected(pair.error());
  const std::vector<double>& before = (*pair)[0];
  const std::vector<double>& after = (*pair)[1];
  if (!before.empty() && !after.empty()) {
    culprit.magnitude = stats::Median(after) / stats::Median(before) - 1;
    const stats::Interval ci = stats::BootstrapMedianChangeCi(before, after, {});
    culprit.ci_low = ci.lower;
    culprit.ci_high = ci.upper;
  }
  const double change = report_.endpoints.change;
  culprit.share = change != 0 ? culprit.magnitude / change : 1;
  // A further step is looked for on a side whose ends differed by half the threshold; when the
  // step it leads to, measured side by side, is not worse beyond doubt, that side's difference
  // was noise, and the step is not reported.
  const bool worse =
      direction_ == Direction::kLowerIsBetter ? culprit.ci_low > 0 : culprit.ci_high < 0;
  if (!report_.culprits.empty() && !worse) {
    report_.warnings.push_back(
        "the step at " + Short(c.sha) + " (" + SignedPercent(culprit.magnitude) + " [" +
        SignedPercent(culprit.ci_low) + ", " + SignedPercent(culprit.ci_high) +
        "]) is not distinguishable from noise; not reported");
    return {};
  }
  report_.culprits.push_back(culprit);
  // What the culprits found so far explain together (their steps compound): when it falls short,
  // another step is looked for on the sides, whose own check (below) tells a step from noise.
  double explained = 1;
  for (const Culprit& found : report_.culprits) explained *= 1 + found.magnitude;
  const double share = change != 0 ? (explained - 1) / change : 1;
  if (share >= options_.explained_share) return {};
  // The rest may be another step on a side of this window whose two ends still differ.
  std::size_t found = 0;
  for (const auto& [a, b] : {std::pair{lo, last_good}, std::pair{first_bad, hi}}) {
    if (b <= a) continue;
    auto rest = Compare(a, b, options_.threshold / 2,
                        "side " + Short(commits_[a].sha) + ".." + Short(commits_[b].sha));
    if (!rest) return tl::unexpected(rest.error());
    if (rest->reproduced) {
      windows_.push_back({a, b});
      ++found;
    }
  }
  const std::string who = report_.culprits.size() == 1 ? Short(c.sha) + " explains "
                                                       : std::string("the culprits explain ");
  if (found > 0) {
    report_.warnings.push_back(who + SignedPercent(share).substr(1) +
                               " of the change between the ends; looking for another step");
  } else if (share < 0.7) {
    report_.warnings.push_back(who + "only " + SignedPercent(share).substr(1) +
                               " of the change between the ends, and no other step shows on "
                               "either side (the rest may be spread over many commits)");
  }
  return {};
}

}  // namespace

Result<Outcome> RunSearch(const std::vector<CommitRef>& commits, const SearchOptions& options,
                          std::vector<Measurement>* log, const MeasureFn& measure,
                          const ProgressFn& progress) {
  if (commits.size() < 2) return InvalidArgument("needs the good and the bad end", "commits");
  if (options.repetitions < 2) return InvalidArgument("must be at least 2", "repetitions");
  if (options.max_repetitions < options.repetitions) {
    return InvalidArgument("must be at least repetitions", "max_repetitions");
  }
  if (!(options.threshold > 0) || !(options.alpha > 0 && options.alpha < 1) ||
      options.max_culprits < 1 || !(options.explained_share > 0)) {
    return InvalidArgument(
        "threshold, alpha, max_culprits and explained_share must be positive "
        "(alpha below 1)",
        "options");
  }
  Driver driver(commits, options, log, measure, progress);
  return driver.Run();
}

}  // namespace perfwarden::bisect
