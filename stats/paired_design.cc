// SPDX-License-Identifier: Apache-2.0
#include "stats/paired_design.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "stats/distributions.h"
#include "stats/power.h"
#include "stats/signed_rank.h"
#include "stats/verdict.h"

namespace perfwarden::stats {
namespace {

constexpr int kMaxBlocks = 10000;
constexpr int kMaxBlocksNeeded = 1000000;
// Lower bound of the asymptotic relative efficiency of the signed-rank test against the t-test
// over all continuous symmetric distributions (Hodges & Lehmann 1956).
constexpr double kMinSignedRankEfficiency = 0.864;
// The 20%-trimmed mean's efficiency against the mean at the normal distribution (Wilcox, 4.2).
constexpr double kTrimmedEfficiency = 0.94;

}  // namespace

std::string_view PairedTestName(PairedTest test) {
  switch (test) {
    case PairedTest::kT:
      return "t";
    case PairedTest::kWilcoxon:
      return "wilcoxon";
    case PairedTest::kTrimmed:
      return "trimmed";
  }
  return "t";
}

std::optional<PairedTest> ParsePairedTest(std::string_view name) {
  if (name == "t") return PairedTest::kT;
  if (name == "wilcoxon" || name == "signed-rank") return PairedTest::kWilcoxon;
  if (name == "trimmed") return PairedTest::kTrimmed;
  return std::nullopt;
}

Result<PairedPolicy> ValidatePairedPolicy(const PairedPolicy& policy) {
  if (auto ok = ValidateCommonRanges(policy.threshold, policy.alpha, policy.power,
                                     policy.confidence, policy.bootstrap_resamples);
      !ok) {
    return tl::unexpected(ok.error());
  }
  if (policy.min_blocks < 3) {
    return InvalidArgument("must be at least 3 (a t-test on 2 blocks has 1 degree of freedom)",
                           "min_blocks");
  }
  if (policy.max_blocks < policy.min_blocks || policy.max_blocks > kMaxBlocks) {
    return InvalidArgument("must be between min_blocks and " + std::to_string(kMaxBlocks),
                           "max_blocks");
  }
  if (!(policy.growth > 1 && policy.growth <= 10)) {
    return InvalidArgument("must be in (1, 10] (1.5: each look has up to 50% more blocks)",
                           "growth");
  }
  return policy;
}

std::vector<int> PairedLookSchedule(int min_blocks, int max_blocks, double growth) {
  std::vector<int> schedule;
  if (min_blocks < 1 || max_blocks < min_blocks || !(growth > 1) || !std::isfinite(growth)) {
    return schedule;
  }
  const double span = static_cast<double>(max_blocks) / min_blocks;
  // The small allowance keeps an exact power (growth 2 from 6 to 24) from adding a look.
  const int looks = max_blocks == min_blocks
                        ? 1
                        : 1 + static_cast<int>(std::ceil(std::log(span) / std::log(growth) - 1e-9));
  for (int k = 0; k < looks; ++k) {
    const double fraction = looks == 1 ? 0.0 : static_cast<double>(k) / (looks - 1);
    int blocks = static_cast<int>(std::lround(min_blocks * std::pow(span, fraction)));
    if (k == looks - 1) blocks = max_blocks;
    if (schedule.empty() || blocks > schedule.back()) schedule.push_back(blocks);
  }
  return schedule;
}

int BlocksNeeded(double threshold, double sd, double alpha, double power, PairedTest test) {
  if (!(threshold > 0) || !std::isfinite(threshold) || !(sd >= 0) || !std::isfinite(sd) ||
      !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1)) {
    return -1;
  }
  int n = 2;
  if (sd > 0) {
    const double effect = std::log1p(threshold) / sd;
    auto enough = [&](int blocks) {
      return TTestPower(effect, blocks, alpha, Alternative::kTwoSided) >= power;
    };
    // The normal approximation's count is a close guess (the t-test needs a few more); gallop
    // from it to a bracket [low, high] with enough(high) and !enough(low), then bisect. Each
    // step is a noncentral t evaluation, the costly part.
    const double z = (NormalQuantile(1 - alpha / 2) + NormalQuantile(power)) / effect;
    const double guess = std::ceil(z * z);
    if (!(guess < kMaxBlocksNeeded)) {
      if (!enough(kMaxBlocksNeeded)) return std::numeric_limits<int>::max();
    }
    int high = static_cast<int>(std::clamp(guess, 2.0, static_cast<double>(kMaxBlocksNeeded)));
    int low = high;
    if (enough(high)) {
      for (int step = 1; high > 2; step *= 2) {
        low = std::max(2, high - step);
        if (!enough(low)) break;
        high = low;
      }
      if (high == 2) low = 1;  // 2 blocks reach it: nothing smaller is a test
    } else {
      for (int step = 1;; step *= 2) {
        if (high >= kMaxBlocksNeeded) return std::numeric_limits<int>::max();
        low = high;
        high = std::min(kMaxBlocksNeeded, high + step);
        if (enough(high)) break;
      }
    }
    while (high - low > 1) {
      const int mid = low + (high - low) / 2;
      (enough(mid) ? high : low) = mid;
    }
    n = high;
  }
  if (test == PairedTest::kWilcoxon) {
    n = static_cast<int>(std::ceil(n / kMinSignedRankEfficiency));
    while (WilcoxonMinTwoSidedP(n) >= alpha) ++n;
  }
  if (test == PairedTest::kTrimmed)
    n = std::max(5, static_cast<int>(std::ceil(n / kTrimmedEfficiency)));
  return n;
}

}  // namespace perfwarden::stats
