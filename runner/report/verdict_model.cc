// SPDX-License-Identifier: Apache-2.0
// The gate's fail-safe regression test and the one order in which every report lists results.
#include "runner/report/verdict_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace perfwarden::report {
namespace {

using wire::MetricResult;
using wire::Outcome;
using wire::ResultKind;
using wire::Verdict;

// Compares the digit runs starting at a[i] and b[j] by value; advances i and j past them.
int CompareDigitRuns(std::string_view a, size_t& i, std::string_view b, size_t& j) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && a[i] == '0') ++i;
  while (j < b.size() && b[j] == '0') ++j;
  const size_t a_start = i;
  const size_t b_start = j;
  while (i < a.size() && is_digit(a[i])) ++i;
  while (j < b.size() && is_digit(b[j])) ++j;
  if (i - a_start != j - b_start) return i - a_start < j - b_start ? -1 : 1;
  const int order = a.substr(a_start, i - a_start).compare(b.substr(b_start, j - b_start));
  return order < 0 ? -1 : (order > 0 ? 1 : 0);
}

}  // namespace

bool HasRegression(const Verdict& verdict) {
  if (verdict.outcome == Outcome::kRegression || verdict.counts.regression > 0) return true;
  return std::any_of(verdict.results.begin(), verdict.results.end(),
                     [](const MetricResult& r) { return r.kind == ResultKind::kRegression; });
}

bool IsNoisyEnvironment(const Verdict& verdict) {
  if (verdict.outcome != Outcome::kNoisyEnvironment) return false;
  return std::all_of(verdict.results.begin(), verdict.results.end(), [](const MetricResult& r) {
    return r.kind != ResultKind::kRegression || !r.environment.empty();
  });
}

bool NaturalLess(std::string_view a, std::string_view b) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      if (const int order = CompareDigitRuns(a, i, b, j); order != 0) return order < 0;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  // One is a prefix of the other (in the natural sense): the shorter comes first.
  if (i < a.size() || j < b.size()) return i == a.size();
  return a < b;
}

std::vector<const MetricResult*> OrderedResults(const Verdict& verdict) {
  std::vector<const MetricResult*> rows;
  rows.reserve(verdict.results.size());
  for (const auto& r : verdict.results) rows.push_back(&r);
  // How much worse a regression is: the change oriented so that worse is positive.
  auto severity = [](const MetricResult& r) {
    if (!r.change || std::isnan(*r.change)) return -std::numeric_limits<double>::infinity();
    return r.direction == Direction::kLowerIsBetter ? *r.change : -*r.change;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const MetricResult* a, const MetricResult* b) {
    if (a->kind != b->kind) return a->kind < b->kind;
    if (a->kind == ResultKind::kRegression && severity(*a) != severity(*b)) {
      return severity(*a) > severity(*b);
    }
    if (a->key.benchmark != b->key.benchmark)
      return NaturalLess(a->key.benchmark, b->key.benchmark);
    if (a->key.metric != b->key.metric) return NaturalLess(a->key.metric, b->key.metric);
    return NaturalLess(a->key.suite, b->key.suite);
  });
  return rows;
}

}  // namespace perfwarden::report
