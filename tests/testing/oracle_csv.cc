// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/oracle_csv.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace perfwarden::testing {

std::string FixturePath(std::string_view relative) {
  return std::string(PERFWARDEN_FIXTURES_DIR) + "/" + std::string(relative);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

OracleRow::OracleRow(const std::map<std::string, std::string>* cells, int line)
    : cells_(cells), line_(line) {}

const std::string& OracleRow::Str(const std::string& column) const {
  auto it = cells_->find(column);
  if (it == cells_->end()) throw std::out_of_range("no column " + column);
  return it->second;
}

bool OracleRow::Empty(const std::string& column) const { return Str(column).empty(); }

double ParseNumber(const std::string& text) {
  if (text == "nan") return std::nan("");
  if (text == "inf") return INFINITY;
  if (text == "-inf") return -INFINITY;
  size_t used = 0;
  double value = std::stod(text, &used);
  if (used != text.size()) throw std::invalid_argument("not a number: " + text);
  return value;
}

double OracleRow::Num(const std::string& column) const { return ParseNumber(Str(column)); }

std::vector<double> OracleRow::Vec(const std::string& column) const {
  std::vector<double> values;
  std::istringstream in(Str(column));
  std::string token;
  while (in >> token) values.push_back(ParseNumber(token));
  return values;
}

std::string OracleRow::Where() const {
  std::string where = "line " + std::to_string(line_);
  for (const char* key : {"case", "function", "chart", "kind"}) {
    auto it = cells_->find(key);
    if (it != cells_->end()) where += std::string(" ") + key + "=" + it->second;
  }
  return where;
}

OracleTable ReadGoldenCsv(std::string_view name) {
  OracleTable table;
  table.file = FixturePath("oracles/golden/" + std::string(name));
  std::ifstream in(table.file);
  if (!in) {
    ADD_FAILURE() << "cannot read oracle " << table.file;
    return table;
  }
  std::vector<std::string> header;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::string field;
    std::istringstream ls(line);
    while (std::getline(ls, field, ',')) fields.push_back(field);
    if (line.back() == ',') fields.emplace_back();
    if (header.empty()) {
      header = fields;
      continue;
    }
    if (fields.size() != header.size()) {
      ADD_FAILURE() << table.file << ":" << line_no << ": " << fields.size()
                    << " fields, header has " << header.size();
      continue;
    }
    std::map<std::string, std::string> cells;
    for (size_t i = 0; i < header.size(); ++i) cells[header[i]] = fields[i];
    table.cells.push_back(std::move(cells));
    table.rows.emplace_back(nullptr, line_no);
  }
  for (size_t i = 0; i < table.rows.size(); ++i) {
    table.rows[i] = OracleRow(&table.cells[i], table.rows[i].line());
  }
  if (table.rows.empty()) ADD_FAILURE() << "oracle " << table.file << " has no rows";
  return table;
}

::testing::AssertionResult NearRel(double actual, double expected, double rel, double abs_floor) {
  if (std::isnan(expected)) {
    if (std::isnan(actual)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected NaN, got " << actual;
  }
  if (std::isinf(expected)) {
    if (actual == expected) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected " << expected << ", got " << actual;
  }
  double diff = std::fabs(actual - expected);
  if (diff <= rel * std::fabs(expected) || diff <= abs_floor) return ::testing::AssertionSuccess();
  std::ostringstream msg;
  msg.precision(17);
  msg << "expected " << expected << ", got " << actual << " (rel error "
      << (expected != 0 ? diff / std::fabs(expected) : diff) << ", tolerance " << rel << ")";
  return ::testing::AssertionFailure() << msg.str();
}

WorstError::~WorstError() {
  std::cout << "[ worst rel error ] " << name_ << ": " << worst_ << "\n";
}

void WorstError::Add(double actual, double expected) {
  if (!std::isfinite(expected) || expected == 0) return;
  worst_ = std::max(worst_, std::fabs(actual - expected) / std::fabs(expected));
}

}  // namespace perfwarden::testing
