// SPDX-License-Identifier: Apache-2.0
// A VerdictStore for the verdict use case's unit tests: a pull-request run "feature" on testbed
// "bed" whose baseline is the run "base" at its merge-base, verdicts kept in memory (`saved`).
// A test says which sample sets each side has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/store/store.h"

namespace perfwarden::testing {

class MergeBaseVerdicts : public store::VerdictStore {
 public:
  // The sample sets of the baseline run (`base`) or of the pull request's run.
  virtual std::vector<store::SampleSet> Sets(bool base) = 0;

  Result<store::RunContext> GetRunContext(const store::Project&, const std::string& id) override {
    store::RunContext context;
    context.summary = {id, "proj", "feature", std::string(40, 'b'), "bed", 1, 7, "", "",
                       "", 48,     ""};
    context.target_branch = "main";
    context.merge_base = std::string(40, 'a');
    return context;
  }
  Result<std::optional<store::BaselineChoice>> FindBaseline(const store::Project&,
                                                            const store::RunContext& run,
                                                            std::string*) override {
    return std::optional<store::BaselineChoice>(
        store::BaselineChoice{run.merge_base, "main", "bed", "merge_base", 0, {"base"}});
  }
  Result<std::vector<store::SampleSet>> GetSampleSets(
      const store::Project&, const std::vector<std::string>& ids) override {
    return Sets(ids == std::vector<std::string>{"base"});
  }
  Result<store::StoredVerdict> SaveVerdict(const store::Project&,
                                           const store::NewVerdict& verdict) override {
    saved.push_back({static_cast<int64_t>(saved.size()) + 1, "2024-05-01T10:00:00Z", verdict});
    return saved.back();
  }
  Result<std::optional<store::StoredVerdict>> LatestVerdict(const store::Project&,
                                                            const std::string&) override {
    if (saved.empty()) return std::optional<store::StoredVerdict>();
    return std::optional<store::StoredVerdict>(saved.back());
  }
  Result<std::optional<store::StoredVerdict>> GetVerdict(const store::Project&,
                                                         const std::string& run_id,
                                                         int64_t id) override {
    for (const store::StoredVerdict& v : saved) {
      if (v.id == id && v.verdict.run_id == run_id) return std::optional<store::StoredVerdict>(v);
    }
    return std::optional<store::StoredVerdict>();
  }

  std::vector<store::StoredVerdict> saved;
};

}  // namespace perfwarden::testing
