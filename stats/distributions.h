// SPDX-License-Identifier: Apache-2.0
// Thin wrappers over Boost.Math distributions with the conventions perfwarden needs:
// upper tails computed as complements (no 1 - cdf cancellation), NaN for invalid arguments
// instead of exceptions. Student-t accepts fractional degrees of freedom (Welch).
#pragma once

namespace perfwarden::stats {

double NormalCdf(double z);
double NormalSf(double z);         // 1 - cdf, computed directly
double NormalQuantile(double p);   // NaN outside (0, 1); -inf/+inf at 0/1
double NormalTwoSidedP(double z);  // 2 * sf(|z|)

double StudentTCdf(double t, double df);
double StudentTSf(double t, double df);
double StudentTQuantile(double p, double df);   // NaN when df <= 0 or p outside [0, 1]
double StudentTTwoSidedP(double t, double df);  // 2 * sf(|t|); NaN when t or df is NaN

// Binomial(n, p) cumulative probability P(X <= k); NaN when n < 0, p outside [0, 1] or k is
// NaN; 0 below 0 and 1 from n on.
double BinomialCdf(double k, double n, double p);

// Non-central t (for power analysis).
double NonCentralTCdf(double t, double df, double noncentrality);
double NonCentralTSf(double t, double df, double noncentrality);

}  // namespace perfwarden::stats
