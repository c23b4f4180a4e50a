// SPDX-License-Identifier: Apache-2.0
// perfwarden's history detector and the peers' default methods on the TCPD series
// (tests/fixtures/oracles/tcpd; docs/statistics.md, "TCPD"), scored as TCPDBench scores its
// default-parameter experiment: F1 with a margin of 5 points against all five annotators, one
// run per series with the method's defaults, the series' values as the levels.
//
//   tcpd_quality [TCPD_DIR] [--threshold X --window N --max-pvalue P --level-points N
//                 --min-segment N --rank-test 0|1 --serial-correction 0|1
//                 --rank-pvalue P --mean-shift 0|1 --mean-shift-penalty X --clip-sigmas X]
//                (perfwarden's; defaults: HistoryOptions{})
//                [--subset even|odd]   (every other series: tune on one half, check on the other)
//                [--series NAME]       (that series alone)
//                [--list]              (perfwarden's detections and the annotations, series by
//                series)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/testing/history_quality.h"
#include "tests/testing/tcpd.h"

namespace {

using perfwarden::quality::TcpdFMeasure;

int Run(int argc, char** argv) {
  std::string dir = PERFWARDEN_FIXTURES_DIR "/oracles/tcpd";
  std::string subset;
  std::string only;
  bool list = false;
  perfwarden::stats::HistoryOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      dir = arg;
      continue;
    }
    if (arg == "--list") {
      list = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "tcpd_quality: %s needs a value\n", arg.c_str());
      return 2;
    }
    const char* value = argv[++i];
    if (perfwarden::quality::SetDetectorOption(options, arg, value)) continue;
    if (arg == "--subset") {
      subset = value;
    } else if (arg == "--series") {
      only = value;
    } else {
      std::fprintf(stderr, "tcpd_quality: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  auto corpus = perfwarden::quality::LoadTcpd(dir);
  if (!corpus) {
    std::fprintf(stderr, "tcpd_quality: %s\n", corpus.error().ToString().c_str());
    return 1;
  }
  std::vector<perfwarden::quality::TcpdSeries> series;
  for (std::size_t i = 0; i < corpus->series.size(); ++i) {
    if (!only.empty() && corpus->series[i].name != only) continue;
    if (subset.empty() || (i % 2 == 0) == (subset == "even")) series.push_back(corpus->series[i]);
  }
  if (series.empty()) {
    std::fprintf(stderr, "tcpd_quality: no series %s%s in %s\n", only.c_str(),
                 subset.empty() ? "" : (" in the " + subset + " half").c_str(), dir.c_str());
    return 2;
  }
  const auto methods = perfwarden::quality::Methods(options);
  std::printf("%zu series (excluded:", series.size());
  for (const auto& e : corpus->excluded) std::printf(" %s", e.c_str());
  std::printf(
      "); perfwarden: threshold %g, window %zu, max p-value %g, level points %zu, "
      "min segment %zu, rank test %s at %g, mean-shift candidates %s (penalty %g, clip %g)"
      "\n\n| series | points | zero |",
      options.threshold, options.window, options.max_pvalue, options.level_points,
      options.min_segment, options.rank_test ? "on" : "off", options.rank_pvalue,
      options.mean_shift ? "on" : "off", options.mean_shift_penalty, options.clip_sigmas);
  for (const auto& m : methods) std::printf(" %s |", m.name.c_str());
  std::printf("\n|---|---:|---:|");
  for (std::size_t m = 0; m < methods.size(); ++m) std::printf("---:|");
  std::printf("\n");
  double zero_sum = 0;
  std::vector<double> sums(methods.size(), 0.0);
  std::size_t below_zero = 0;  // series where perfwarden is more than 0.1 below zero
  for (const auto& s : series) {
    const double zero = TcpdFMeasure(s.annotations, {}).f1;
    zero_sum += zero;
    std::printf("| %s | %zu | %.3f |", s.name.c_str(), s.values.size(), zero);
    for (std::size_t m = 0; m < methods.size(); ++m) {
      auto found = methods[m].detect(s.values);
      if (!found) {
        std::fprintf(stderr, "tcpd_quality: %s on %s: %s\n", methods[m].name.c_str(),
                     s.name.c_str(), found.error().ToString().c_str());
        return 1;
      }
      const double f1 = TcpdFMeasure(s.annotations, *found).f1;
      sums[m] += f1;
      if (m == 0 && f1 < zero - 0.1) ++below_zero;
      std::printf(" %.3f |", f1);
      if (m == 0 && list) {
        std::printf(" found");
        for (std::size_t x : *found) std::printf(" %zu", x);
        std::printf("; annotated");
        for (const auto& [who, points] : s.annotations) {
          std::printf(" %s:", who.c_str());
          for (std::size_t x : points) std::printf("%zu,", x);
        }
        std::printf(" |");
      }
    }
    std::printf("\n");
  }
  const double n = static_cast<double>(series.size());
  std::printf("| **mean** | | %.3f |", zero_sum / n);
  for (double sum : sums) std::printf(" %.3f |", sum / n);
  std::printf("\n\nperfwarden: mean F1 %.4f; %zu series more than 0.1 below zero\n", sums[0] / n,
              below_zero);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
