// SPDX-License-Identifier: Apache-2.0
// The creep table of docs/statistics.md, "Creep": stats::DetectCreeps after the history detector
// on every series of the labelled corpus (tests/testing/creep_quality.h).
// Usage: creep_quality [CORPUS_DIR] [WINDOW] [MAX_PVALUE]
//   (default tests/fixtures/history, the stats::CreepOptions defaults)
#include "tests/testing/creep_quality.h"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  using namespace perfwarden;
  const std::string dir = argc > 1 ? argv[1] : std::string(PERFWARDEN_FIXTURES_DIR) + "/history";
  stats::CreepOptions options;
  if (argc > 2) options.window = std::strtoul(argv[2], nullptr, 10);
  if (argc > 3) options.max_pvalue = std::strtod(argv[3], nullptr);
  auto corpus = quality::LoadCorpus(dir);
  if (!corpus) {
    std::fprintf(stderr, "creep_quality: %s\n", corpus.error().ToString().c_str());
    return 2;
  }
  auto scores = quality::EvaluateCreeps(*corpus, {}, options);
  if (!scores) {
    std::fprintf(stderr, "creep_quality: %s\n", scores.error().ToString().c_str());
    return 2;
  }
  std::printf("window %zu, max p-value %g, threshold %g\n\n%s", options.window, options.max_pvalue,
              options.threshold, quality::FormatCreepTable(*scores).c_str());
  return 0;
}
