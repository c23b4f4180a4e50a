// SPDX-License-Identifier: Apache-2.0
// Test support: reading the oracle tables (tests/fixtures/oracles, copies of
// ../shared/oracles) and comparing doubles to a relative tolerance.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfwarden::testing {

// Absolute path of a file under tests/fixtures.
std::string FixturePath(std::string_view relative);

// Whole file as a string; fails the current test (and returns "") when unreadable.
std::string ReadFile(const std::string& path);

// One row of an oracle CSV, addressed by column name. Numbers use Python's repr() format;
// "nan", "inf", "-inf" are understood. Vectors are space-separated in one cell.
class OracleRow {
 public:
  OracleRow(const std::map<std::string, std::string>* cells, int line);
  const std::string& Str(const std::string& column) const;
  bool Empty(const std::string& column) const;
  double Num(const std::string& column) const;
  std::vector<double> Vec(const std::string& column) const;
  int line() const { return line_; }
  // "file.csv:LINE case=..." for failure messages.
  std::string Where() const;

 private:
  const std::map<std::string, std::string>* cells_;
  int line_;
};

struct OracleTable {
  std::string file;
  std::vector<std::map<std::string, std::string>> cells;
  std::vector<OracleRow> rows;
};

// Reads tests/fixtures/oracles/golden/<name>. Fails the test if missing or empty.
OracleTable ReadGoldenCsv(std::string_view name);

// Parses one number in Python repr() format ("nan", "inf", "-inf" included).
double ParseNumber(const std::string& text);

// |actual - expected| <= rel * |expected| (or <= abs_floor); NaN equals NaN, inf equals inf
// of the same sign.
::testing::AssertionResult NearRel(double actual, double expected, double rel,
                                   double abs_floor = 0.0);

// Worst relative error seen over a table's rows, printed when it goes out of scope so that
// drift shows in the test log before it fails a tolerance.
class WorstError {
 public:
  explicit WorstError(std::string name) : name_(std::move(name)) {}
  ~WorstError();
  void Add(double actual, double expected);
  double worst() const { return worst_; }

 private:
  std::string name_;
  double worst_ = 0;
};

}  // namespace perfwarden::testing
