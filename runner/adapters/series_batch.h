// SPDX-License-Identifier: Apache-2.0
// The inputs of `perfwarden analyze` as one batch: several files, a directory's series files, or
// JSON-lines files holding a series per line, read in one process so that a corpus of hundreds of
// series costs one start-up. One bad input never hides the others: each entry carries its series
// or the error that names its file (and line).
#pragma once

#include <string>
#include <vector>

#include "runner/adapters/series_input.h"

namespace perfwarden::adapters {

struct SeriesBatch {
  std::vector<NamedSeries> series;  // in input order; a directory's files sorted by name
  // True unless the inputs are one plain file or "-" (not JSON lines): the caller then prints
  // per-series output with names, and a single input keeps exactly the one-series output.
  bool many = false;
};

// Reads every input in order: a file (ReadSeries; named by its path as given), "-" (stdin), a
// directory (its regular files ending in .csv, .json or .jsonl, any case, not recursive, sorted by
// name, each named DIR/FILE), or a JSON-lines file (ParseSeriesJsonLines: by `jsonl`, or a name
// ending in .jsonl). An unreadable input, or a directory without series files, becomes one entry
// holding its error.
SeriesBatch ReadSeriesBatch(const std::vector<std::string>& inputs, bool jsonl);

}  // namespace perfwarden::adapters
