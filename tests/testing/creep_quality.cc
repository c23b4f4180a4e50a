// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/creep_quality.h"

#include <cmath>
#include <cstdio>

namespace perfwarden::quality {

Result<std::map<std::string, CreepScore>> EvaluateCreeps(const std::vector<LabelledSeries>& corpus,
                                                         const stats::HistoryOptions& history,
                                                         const stats::CreepOptions& creep) {
  std::map<std::string, CreepScore> scores;
  for (const LabelledSeries& s : corpus) {
    auto steps = stats::DetectSteps(s.levels, history);
    if (!steps) return tl::unexpected(steps.error());
    std::vector<std::size_t> indices;
    for (const stats::Step& step : *steps) indices.push_back(step.index);
    auto creeps = stats::DetectCreeps(s.levels, indices, creep);
    if (!creeps) return tl::unexpected(creeps.error());
    for (CreepScore* score : {&scores[s.category], &scores["all"]}) {
      score->series += 1;
      score->points += s.levels.size();
      score->creeps += creeps->size();
      std::size_t false_here = 0;
      for (const stats::Creep& c : *creeps) {
        bool overlaps = false;
        for (const auto& [start, end] : s.drifts) overlaps |= c.start < end && c.end >= start;
        false_here += overlaps ? 0 : 1;
      }
      score->false_creeps += false_here;
      score->series_with_false_creep += false_here > 0 ? 1 : 0;
      std::vector<std::size_t> kept = indices;
      for (const stats::Creep& c : *creeps) {
        for (std::size_t replaced : c.steps) {
          score->steps_replaced += 1;
          std::erase(kept, replaced);
          bool real = false;
          for (const PlantedStep& p : s.steps) {
            real |= std::fabs(p.size) >= 0.05 && replaced + 5 >= p.index && replaced <= p.index + 5;
          }
          score->real_steps_lost += real ? 1 : 0;
        }
      }
      for (const auto& [start, end] : s.drifts) {
        score->drifts += 1;
        bool by_creep = false, by_step = false;
        for (const stats::Creep& c : *creeps) by_creep |= c.start < end && c.end >= start;
        for (std::size_t i : kept) by_step |= i + 5 >= start && i < end + 5;
        if (by_creep) {
          score->drifts_by_creep += 1;
        } else if (by_step) {
          score->drifts_by_step += 1;
        } else {
          score->drifts_missed += 1;
        }
      }
    }
  }
  return scores;
}

std::string FormatCreepTable(const std::map<std::string, CreepScore>& scores) {
  std::string out =
      "| Category | Series | Points | Drifts | By creep | By step only | Missed | Creeps | False "
      "creeps | Series with a false creep | Steps replaced | Real steps lost |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [category, s] : scores) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "| %s | %zu | %zu | %zu | %zu | %zu | %zu | %zu | %zu | %zu | %zu | %zu |\n",
                  category.c_str(), s.series, s.points, s.drifts, s.drifts_by_creep,
                  s.drifts_by_step, s.drifts_missed, s.creeps, s.false_creeps,
                  s.series_with_false_creep, s.steps_replaced, s.real_steps_lost);
    out += line;
  }
  return out;
}

}  // namespace perfwarden::quality
