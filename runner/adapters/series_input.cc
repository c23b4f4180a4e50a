// SPDX-License-Identifier: Apache-2.0
// Series parsing for `perfwarden analyze` (see series_input.h for the accepted shapes).
#include "runner/adapters/series_input.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "core/text.h"
#include "runner/adapters/input_text.h"
#include "runner/adapters/json_text.h"
#include "stats/descriptive.h"

namespace perfwarden::adapters {
namespace {

// The whole cell as a double (a leading '+' allowed); nullopt when it is not a number. Non-finite
// spellings (nan, inf, infinity) parse, so that the caller can refuse them by name.
std::optional<double> ParseNumber(std::string_view cell) {
  if (!cell.empty() && cell.front() == '+') cell.remove_prefix(1);
  if (cell.empty() || cell.front() == '+') return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (ec != std::errc() || end != cell.data() + cell.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitCells(std::string_view line, char separator) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  while (true) {
    size_t end = line.find(separator, start);
    std::string_view cell =
        Trim(line.substr(start, end == std::string_view::npos ? end : end - start));
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
      cell = Trim(cell.substr(1, cell.size() - 2));
    }
    cells.push_back(cell);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return cells;
}

std::string Quoted(std::string_view cell) {
  constexpr size_t kMaxShown = 40;  // a runaway cell (a whole binary line) stays readable
  if (cell.size() > kMaxShown) return "'" + std::string(cell.substr(0, kMaxShown)) + "...'";
  return "'" + std::string(cell) + "'";
}

std::string Index(size_t i) { return "[" + std::to_string(i) + "]"; }

}  // namespace

SeriesFormat DetectSeriesFormat(std::string_view path, std::string_view text) {
  const std::string lower = AsciiLower(path);
  if (lower.ends_with(".json")) return SeriesFormat::kJson;
  if (lower.ends_with(".csv")) return SeriesFormat::kCsv;
  std::string_view content = Trim(text);
  if (content.starts_with("\xEF\xBB\xBF")) content = Trim(content.substr(3));
  if (!content.empty() && (content.front() == '[' || content.front() == '{')) {
    return SeriesFormat::kJson;
  }
  return SeriesFormat::kCsv;
}

namespace {

// The points of a series given as a parsed JSON value (see ParseSeriesJson); messages start with
// `prefix` ("s.json: ", "s.jsonl:3: ").
Result<SeriesPoints> SeriesFromJson(const nlohmann::json& root, const std::string& prefix) {
  if (!root.is_array()) {
    return InvalidArgument(prefix +
                           "expected an array of numbers or of arrays of repetitions, got " +
                           std::string(JsonTypeName(root)));
  }
  // A finite number, or the problem with `value` at `where`.
  auto number = [&](const nlohmann::json& value, const std::string& where) -> Result<double> {
    if (!value.is_number()) {
      return InvalidArgument(prefix + where + ": expected a number, got " +
                             std::string(JsonTypeName(value)));
    }
    const double x = value.get<double>();
    if (!std::isfinite(x)) {
      return InvalidArgument(prefix + where + ": " + (std::isnan(x) ? "NaN" : "an infinity") +
                             " is not a measurement (every value must be finite)");
    }
    return x;
  };
  SeriesPoints points;
  points.reserve(root.size());
  for (size_t i = 0; i < root.size(); ++i) {
    const nlohmann::json& point = root[i];
    if (point.is_array()) {
      if (point.empty()) {
        return InvalidArgument(prefix + Index(i) + ": empty point (no repetitions)");
      }
      std::vector<double> repetitions;
      repetitions.reserve(point.size());
      for (size_t j = 0; j < point.size(); ++j) {
        auto x = number(point[j], Index(i) + Index(j));
        if (!x) return tl::unexpected(x.error());
        repetitions.push_back(*x);
      }
      points.push_back(std::move(repetitions));
    } else if (point.is_number()) {
      auto x = number(point, Index(i));
      if (!x) return tl::unexpected(x.error());
      points.push_back({*x});
    } else {
      return InvalidArgument(prefix + Index(i) +
                             ": expected a number or an array of repetitions, got " +
                             std::string(JsonTypeName(point)));
    }
  }
  return points;
}

}  // namespace

Result<SeriesPoints> ParseSeriesJson(std::string_view text, std::string_view source) {
  auto parsed = adapters::ParseJsonText(text, source);
  if (!parsed) return tl::unexpected(parsed.error());
  return SeriesFromJson(*parsed, std::string(source) + ": ");
}

Result<SeriesPoints> ParseSeriesCsv(std::string_view text, std::string_view source) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  SeriesPoints points;
  std::optional<char> separator;
  bool first_row = true;
  size_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    if (!separator) {
      // One separator per file: a decimal comma under ';' must not silently split a value.
      separator = line.find('\t') != std::string_view::npos  ? '\t'
                  : line.find(';') != std::string_view::npos ? ';'
                                                             : ',';
    }
    const std::vector<std::string_view> cells = SplitCells(line, *separator);
    const std::string where = std::string(source) + ":" + std::to_string(line_number) + ": ";
    if (first_row) {
      first_row = false;
      bool any_number = false;
      for (std::string_view cell : cells) any_number = any_number || ParseNumber(cell).has_value();
      if (!any_number) continue;  // a header such as "rep1,rep2,rep3"
    }
    std::vector<double> repetitions;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (cells[c].empty()) continue;
      const std::optional<double> x = ParseNumber(cells[c]);
      const std::string column = "column " + std::to_string(c + 1) + ": ";
      if (!x) return InvalidArgument(where + column + Quoted(cells[c]) + " is not a number");
      if (!std::isfinite(*x)) {
        return InvalidArgument(where + column + Quoted(cells[c]) +
                               " is not a measurement (every value must be finite)");
      }
      repetitions.push_back(*x);
    }
    if (repetitions.empty()) return InvalidArgument(where + "empty point (no values in the row)");
    points.push_back(std::move(repetitions));
  }
  return points;
}

namespace {

// A change needs a before and an after.
Result<SeriesPoints> AtLeastTwo(Result<SeriesPoints> points, const std::string& prefix) {
  if (!points) return points;
  if (points->size() < 2) {
    return InvalidArgument(prefix + std::to_string(points->size()) +
                           (points->size() == 1 ? " point" : " points") +
                           "; change-point analysis needs at least 2");
  }
  return points;
}

// One line of a JSON-lines file: an object {"name", "values"} or a bare series.
Result<SeriesPoints> SeriesFromLine(std::string_view line, const std::string& where,
                                    std::string& name) {
  auto parsed = adapters::ParseJsonText(line, "");
  if (!parsed) {
    // ParseJsonText's place is ":1:<column>: ..." in the line; the file's line replaces the 1.
    const std::string& message = parsed.error().message;
    const std::size_t column = message.find(':', 1);
    return InvalidArgument(where + "column " +
                           (column == std::string::npos ? message : message.substr(column + 1)));
  }
  const nlohmann::json& root = *parsed;
  if (root.is_array()) return SeriesFromJson(root, where);
  if (!root.is_object()) {
    return InvalidArgument(where + "expected an object {\"name\", \"values\"} or an array, got " +
                           std::string(JsonTypeName(root)));
  }
  for (const auto& [key, value] : root.items()) {
    if (key != "name" && key != "values") {
      return InvalidArgument(where + "unknown key '" + key + "' (expected name, values)");
    }
  }
  if (root.contains("name")) {
    if (!root["name"].is_string() || root["name"].get<std::string>().empty()) {
      return InvalidArgument(where + "name: expected a non-empty string, got " +
                             std::string(JsonTypeName(root["name"])));
    }
    name = root["name"].get<std::string>();
  }
  if (!root.contains("values")) return InvalidArgument(where + "values: missing");
  return SeriesFromJson(root["values"], where + "values: ");
}

}  // namespace

Result<SeriesPoints> ParseSeries(std::string_view text, std::string_view source,
                                 SeriesFormat format) {
  return AtLeastTwo(
      format == SeriesFormat::kJson ? ParseSeriesJson(text, source) : ParseSeriesCsv(text, source),
      std::string(source) + ": ");
}

std::vector<NamedSeries> ParseSeriesJsonLines(std::string_view text, std::string_view source) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<NamedSeries> out;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    const std::string place = std::string(source) + ":" + std::to_string(line_number);
    NamedSeries series{place, {}};
    series.points = AtLeastTwo(SeriesFromLine(line, place + ": ", series.name), place + ": ");
    out.push_back(std::move(series));
  }
  if (out.empty()) {
    out.push_back({std::string(source), InvalidArgument(std::string(source) +
                                                        ": no series (an empty JSON-lines file)")});
  }
  return out;
}

Result<SeriesPoints> ReadSeries(const std::string& path) {
  try {
    auto input = ReadInputText(path);
    if (!input) return tl::unexpected(input.error());
    return ParseSeries(input->text, input->source,
                       DetectSeriesFormat(path == "-" ? "" : path, input->text));
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, path + ": cannot read: " + e.what());
  }
}

std::vector<double> PointLevels(const SeriesPoints& points) {
  std::vector<double> levels;
  levels.reserve(points.size());
  for (const std::vector<double>& repetitions : points)
    levels.push_back(stats::Median(repetitions));
  return levels;
}

}  // namespace perfwarden::adapters
