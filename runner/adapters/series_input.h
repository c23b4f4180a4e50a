// SPDX-License-Identifier: Apache-2.0
// The input of `perfwarden analyze`: a benchmark series as JSON (an array of numbers, or of arrays
// of repetitions) or CSV (one row per point, one or more columns of repetitions). Errors name the
// source and the place (`s.csv:12: ...`, `s.json: [12][3]: ...`) so that a user can fix the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace perfwarden::adapters {

enum class SeriesFormat { kJson, kCsv };

// One entry per point, in order: that point's repetitions (never empty, every value finite).
using SeriesPoints = std::vector<std::vector<double>>;

// By the extension of `path` (.json or .csv, any case); otherwise (stdin, .txt, ...) by content:
// text whose first non-blank character is '[' or '{' is JSON, anything else CSV.
SeriesFormat DetectSeriesFormat(std::string_view path, std::string_view text);

// JSON: an array whose elements are numbers (one value per point) or non-empty arrays of numbers
// (repetitions). NaN/Infinity tokens are read so that they can be refused by name. Errors
// (kInvalidArgument): "<source>:<line>:<column>: invalid JSON: ..." for syntax, "<source>: [12][3]:
// <problem>" for a value that is not a finite number or a point without repetitions.
Result<SeriesPoints> ParseSeriesJson(std::string_view text, std::string_view source);

// CSV: one row per point, its numeric cells are the repetitions. The separator is the first of
// tab, ';' or ',' found on the first non-blank line; blank lines are ignored; a first row in which
// no cell is a number is a header and skipped; empty cells are skipped (rows of unequal length
// from a spreadsheet), a row with no value at all is an error; a UTF-8 BOM and double quotes
// around a cell are dropped. Errors (kInvalidArgument): "<source>:<line>: <problem>".
Result<SeriesPoints> ParseSeriesCsv(std::string_view text, std::string_view source);

// Parses `text` in `format`, then requires at least 2 points (a change needs a before and after).
Result<SeriesPoints> ParseSeries(std::string_view text, std::string_view source,
                                 SeriesFormat format);

// A series of a batch: its name and its points, or why it could not be read.
struct NamedSeries {
  std::string name;
  Result<SeriesPoints> points;
};

// JSON lines: one series per non-blank line, either {"name": "...", "values": SERIES} ("name"
// optional, no other key) or a bare SERIES, where SERIES is what ParseSeriesJson accepts. A series
// without a name is named "<source>:<line>". Every line is parsed, a bad one does not stop the
// others: its entry holds the error, "<source>:<line>: ..." ("s.jsonl:3: values[12]: NaN is not
// a measurement", "s.jsonl:4: column 9: invalid JSON: ..."). Each series needs at least 2 points.
// A file without any series gives one entry with that error.
std::vector<NamedSeries> ParseSeriesJsonLines(std::string_view text, std::string_view source);

// Reads `path` ("-" reads standard input, named "<stdin>" in messages) and parses it, the format
// chosen by DetectSeriesFormat. Errors as ParseSeries, plus a missing or unreadable file.
Result<SeriesPoints> ReadSeries(const std::string& path);

// The level of each point: the median of its repetitions, so that one slow repetition (a page
// fault, a noisy neighbour) does not move the point the way a mean would.
std::vector<double> PointLevels(const SeriesPoints& points);

}  // namespace perfwarden::adapters
