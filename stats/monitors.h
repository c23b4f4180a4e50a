// SPDX-License-Identifier: Apache-2.0
// Online monitors for a series of per-commit values: EWMA control chart, tabular CUSUM and
// Page-Hinkley. Each is a small value type updated in O(1) per point, resettable (re-baselined
// when a change is acknowledged) and with plain state so that the server can persist it.
// Non-finite points (NaN, inf) are ignored: the state is unchanged and no signal is raised, so
// one bad value cannot corrupt a persisted state. A state with i <= 0 counts as just reset (for
// the EWMA, z = mu0 whatever the stored z).
// Also the average run length (ARL) functions that pick their parameters, as R's spc package
// computes them.
#pragma once

#include <cstdint>

namespace perfwarden::stats {

struct EwmaParams {
  double mu0 = 0;       // in-control mean
  double sigma = 1;     // in-control standard deviation of one point
  double lambda = 0.2;  // smoothing weight of the newest point, in (0, 1]
  double L = 3.0;       // limit width in units of the EWMA's standard deviation
};

struct EwmaState {
  int64_t i = 0;  // points seen since the last reset
  double z = 0;   // current EWMA (mu0 after a reset)
};

struct EwmaStep {
  int64_t i = 0;
  double z = 0;
  double lcl = 0;  // time-varying limits: mu0 -/+ L sigma sqrt(lambda/(2-lambda) (1-(1-lambda)^2i))
  double ucl = 0;
  bool signal = false;  // z outside [lcl, ucl]
};

class EwmaChart {
 public:
  explicit EwmaChart(EwmaParams params, EwmaState state = {});
  EwmaStep Update(double x);
  void Reset();  // back to z = mu0, i = 0
  const EwmaParams& params() const { return params_; }
  const EwmaState& state() const { return state_; }

 private:
  EwmaParams params_;
  EwmaState state_;
};

struct CusumParams {
  double mu0 = 0;
  double sigma = 1;
  double k = 0.5;  // reference value (allowance), in sigmas
  double h = 5.0;  // decision interval, in sigmas
};

struct CusumState {
  int64_t i = 0;
  double c_pos = 0;  // upper CUSUM C+_i = max(0, x - (mu0 + k sigma) + C+_{i-1})
  double c_neg = 0;  // lower CUSUM C-_i = max(0, (mu0 - k sigma) - x + C-_{i-1})
};

struct CusumStep {
  int64_t i = 0;
  double c_pos = 0;
  double c_neg = 0;
  bool signal_up = false;    // C+ > h sigma
  bool signal_down = false;  // C- > h sigma
};

class TabularCusum {
 public:
  explicit TabularCusum(CusumParams params, CusumState state = {});
  CusumStep Update(double x);
  void Reset();
  const CusumParams& params() const { return params_; }
  const CusumState& state() const { return state_; }

 private:
  CusumParams params_;
  CusumState state_;
};

// Page-Hinkley test for an increase (and, symmetrically, a decrease) of the mean:
// m_T = sum (x_t - mean_t - delta), signal when m_T - min m_t > threshold.
struct PageHinkleyParams {
  double delta = 0.005;   // magnitude of changes that are tolerated
  double threshold = 50;  // lambda, the detection threshold
};

struct PageHinkleyState {
  int64_t n = 0;
  double mean = 0;  // running mean of the points since the reset
  double m_up = 0;  // cumulative statistic for an increase
  double min_up = 0;
  double m_down = 0;  // cumulative statistic for a decrease
  double max_down = 0;
};

struct PageHinkleyStep {
  int64_t n = 0;
  double ph_up = 0;    // m_up - min_up
  double ph_down = 0;  // max_down - m_down
  bool signal_up = false;
  bool signal_down = false;
};

class PageHinkley {
 public:
  explicit PageHinkley(PageHinkleyParams params, PageHinkleyState state = {});
  PageHinkleyStep Update(double x);
  void Reset();
  const PageHinkleyParams& params() const { return params_; }
  const PageHinkleyState& state() const { return state_; }

 private:
  PageHinkleyParams params_;
  PageHinkleyState state_;
};

// Average run lengths for unit-variance normal data with in-control mean 0 and the mean
// shifted by `mu` sigmas, starting from the in-control state, as R's spc package (Knoth)
// computes them (xewma.arl, xcusum.arl, xewma.crit, xcusum.crit). L and h in sigma units as
// in spc (EWMA limits +/- L sqrt(lambda / (2 - lambda))).
enum class EwmaLimits {
  kFixed,             // asymptotic limits from the first point (spc "fix")
  kVarianceAdjusted,  // exact time-varying limits (spc "vacl")
};
double EwmaArl(double lambda, double L, double mu, EwmaLimits limits = EwmaLimits::kFixed);
double CusumArlOneSided(double k, double h, double mu);
double CusumArlTwoSided(double k, double h, double mu);  // spc: 1/ARL = 1/ARL+(mu) + 1/ARL+(-mu)
// The L (fixed limits) / h (two-sided) that give in-control ARL `arl0`.
double EwmaCriticalL(double lambda, double arl0);
double CusumCriticalH(double k, double arl0);

}  // namespace perfwarden::stats
