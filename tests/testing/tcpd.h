// SPDX-License-Identifier: Apache-2.0
// TCPDBench's change-point scoring (van den Burg & Williams, "An Evaluation of Change Point
// Detection Algorithms", 2020; analysis/scripts/metrics.py) and the TCPD series it is applied to
// (tests/fixtures/oracles/tcpd, copies of ../shared/oracles/tcpd). Shared by bench/tcpd_quality.cc
// (the per-series table of docs/statistics.md, "TCPD") and tests/unit/stats/tcpd_score_test.cc.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::quality {

// One annotated series: its values (a univariate series without missing values) and every
// annotator's change points (0-based indices of the first point of a new regime).
struct TcpdSeries {
  std::string name;
  std::vector<double> values;
  std::map<std::string, std::vector<std::size_t>> annotations;  // annotator id -> indices
};

struct TcpdCorpus {
  std::vector<TcpdSeries> series;     // in file-name order
  std::vector<std::string> excluded;  // "name (why)": multivariate or with missing values
};

// The univariate series of `dir`/datasets/*.json without missing values, with their annotations
// from `dir`/annotations.json. kInvalidArgument naming the file for anything unreadable, and for
// a series without annotations.
Result<TcpdCorpus> LoadTcpd(const std::string& dir);

constexpr std::size_t kTcpdMargin = 5;

// metrics.py's true_positives: for each annotation of `truth` in increasing order, the closest
// unmatched prediction within `margin` (the smaller index on ties) matches it and is used up.
// Returns the matched annotations. (metrics.py walks a Python set, whose order for these small
// indices is increasing.)
std::vector<std::size_t> TcpdTruePositives(std::span<const std::size_t> truth,
                                           std::span<const std::size_t> predictions,
                                           std::size_t margin = kTcpdMargin);

struct TcpdF1 {
  double f1 = 0, precision = 0, recall = 0;
};

// metrics.py's f_measure with alpha 0.5: 0 joins every annotator's set and the predictions
// (duplicates collapse); precision = |TP(union of annotations, X)| / |X|; recall = mean over
// annotators of |TP(T_k, X)| / |T_k|; F1 = P R / (R / 2 + P / 2).
TcpdF1 TcpdFMeasure(const std::map<std::string, std::vector<std::size_t>>& annotations,
                    std::span<const std::size_t> predictions, std::size_t margin = kTcpdMargin);

}  // namespace perfwarden::quality
