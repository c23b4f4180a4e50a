// SPDX-License-Identifier: Apache-2.0
// Expanding analyze's inputs into named series (see series_batch.h).
#include "runner/adapters/series_batch.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/text.h"
#include "runner/adapters/input_text.h"

namespace perfwarden::adapters {
namespace {

namespace fs = std::filesystem;

bool IsJsonLinesName(const std::string& path) { return AsciiLower(path).ends_with(".jsonl"); }

bool IsSeriesName(const std::string& name) {
  const std::string lower = AsciiLower(name);
  return lower.ends_with(".csv") || lower.ends_with(".json") || lower.ends_with(".jsonl");
}

void ReadJsonLines(const std::string& path, std::vector<NamedSeries>& out) {
  auto input = ReadInputText(path);
  if (!input) {
    out.push_back({path, tl::unexpected(input.error())});
    return;
  }
  for (NamedSeries& series : ParseSeriesJsonLines(input->text, input->source)) {
    out.push_back(std::move(series));
  }
}

void ReadOne(const std::string& path, bool jsonl, std::vector<NamedSeries>& out) {
  if (jsonl || IsJsonLinesName(path)) {
    ReadJsonLines(path, out);
  } else {
    out.push_back({path == "-" ? "<stdin>" : path, ReadSeries(path)});
  }
}

void ReadDirectory(const std::string& dir, std::vector<NamedSeries>& out) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (IsSeriesName(name) && it->is_regular_file(type_ec)) names.push_back(name);
  }
  if (ec) {
    out.push_back({dir, InvalidArgument(dir + ": cannot read the directory: " + ec.message())});
    return;
  }
  if (names.empty()) {
    out.push_back({dir, InvalidArgument(dir + ": no series files (*.csv, *.json, *.jsonl)")});
    return;
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) ReadOne((fs::path(dir) / name).string(), false, out);
}

}  // namespace

SeriesBatch ReadSeriesBatch(const std::vector<std::string>& inputs, bool jsonl) {
  SeriesBatch batch;
  batch.many = inputs.size() != 1;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (input != "-" && fs::is_directory(input, ec)) {
      batch.many = true;
      ReadDirectory(input, batch.series);
    } else {
      if (jsonl || IsJsonLinesName(input)) batch.many = true;
      ReadOne(input, jsonl, batch.series);
    }
  }
  return batch;
}

}  // namespace perfwarden::adapters
