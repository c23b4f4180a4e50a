// SPDX-License-Identifier: Apache-2.0
#include "stats/monitors.h"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// Online monitors
// ---------------------------------------------------------------------------------------------

// Var(z_i) / sigma^2 of the EWMA started at mu0, i points in.
double EwmaVarianceFactor(double lambda, int64_t i) {
  return lambda / (2 - lambda) * (1 - std::pow(1 - lambda, 2.0 * static_cast<double>(i)));
}

EwmaStep MakeEwmaStep(const EwmaParams& p, const EwmaState& s) {
  EwmaStep step;
  step.i = s.i;
  step.z = s.z;
  const double half_width = p.L * p.sigma * std::sqrt(EwmaVarianceFactor(p.lambda, s.i));
  step.lcl = p.mu0 - half_width;
  step.ucl = p.mu0 + half_width;
  step.signal = s.z < step.lcl || s.z > step.ucl;
  return step;
}

// ---------------------------------------------------------------------------------------------
// Numerical machinery for the ARL integral equations
// ---------------------------------------------------------------------------------------------

// Gauss-Legendre nodes and weights on [-1, 1] by Newton's method on P_n (accurate to a few
// ulps for the n <= kMaxNodes used here).
struct Quadrature {
  std::vector<double> x;
  std::vector<double> w;
};

Quadrature GaussLegendre(int n) {
  Quadrature q;
  const auto size = static_cast<size_t>(n);
  q.x.assign(size, 0.0);
  q.w.assign(size, 0.0);
  const double dn = n;
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double z = std::cos(std::numbers::pi * (i + 0.75) / (dn + 0.5));
    double derivative = 1;
    bool converged = false;
    for (int iter = 0; iter < 100; ++iter) {
      double p0 = 1;
      double p1 = z;
      for (int j = 1; j < n; ++j) {
        const double p2 = ((2.0 * j + 1) * z * p1 - j * p0) / (j + 1.0);
        p0 = p1;
        p1 = p2;
      }
      // p1 = P_n(z), p0 = P_{n-1}(z); n == 1 leaves P_1 = z, P_0 = 1 as wanted.
      derivative = dn * (z * p1 - p0) / (z * z - 1);
      const double step = p1 / derivative;
      z -= step;
      // Quadratic convergence: one more step after a small one leaves only rounding error.
      if (converged) break;
      converged = std::fabs(step) <= 1e-12;
    }
    const double weight = 2 / ((1 - z * z) * derivative * derivative);
    q.x[static_cast<size_t>(i)] = -z;
    q.x[size - 1 - static_cast<size_t>(i)] = z;
    q.w[static_cast<size_t>(i)] = weight;
    q.w[size - 1 - static_cast<size_t>(i)] = weight;
  }
  if (n % 2 == 1) q.x[size / 2] = 0;  // exact centre node
  return q;
}

// Solves a x = b in place (b becomes x) by Gaussian elimination with partial pivoting; a is
// n x n row-major and destroyed. The ARL systems are I - K with a contracting K, so they are
// comfortably non-singular for the ARLs double precision can represent.
void SolveInPlace(std::vector<double>& a, std::vector<double>& b, size_t n) {
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r * n + col]) > std::fabs(a[pivot * n + col])) pivot = r;
    }
    if (pivot != col) {
      for (size_t c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
      std::swap(b[col], b[pivot]);
    }
    const double diag = a[col * n + col];
    for (size_t r = col + 1; r < n; ++r) {
      const double factor = a[r * n + col] / diag;
      if (factor == 0) continue;
      for (size_t c = col; c < n; ++c) a[r * n + c] -= factor * a[col * n + c];
      b[r] -= factor * b[col];
    }
  }
  for (size_t r = n; r-- > 0;) {
    double sum = b[r];
    for (size_t c = r + 1; c < n; ++c) sum -= a[r * n + c] * b[c];
    b[r] = sum / a[r * n + r];
  }
}

double NormalPdf(double x) {
  return std::exp(-0.5 * x * x) * (0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
}

// Node counts. The EWMA kernel is a normal density of width lambda sliding over [-c, c], so
// Gauss-Legendre needs a number of nodes proportional to c / lambda (about 4 per kernel width
// gives the oracle's 1e-12 wherever the ARL itself is below ~1e3; larger ARLs are limited by
// rounding in I - K at roughly ARL * 1e-15 relative, which more nodes do not improve). The
// CUSUM kernel has unit width over [0, h]. The cap keeps extreme parameters (lambda ~ 1e-3
// and below) to a bounded cost at reduced accuracy.
constexpr int kMaxNodes = 400;

int EwmaNodes(double lambda, double c) {
  const double n = std::ceil(24 + 4 * c / lambda);
  return n >= kMaxNodes ? kMaxNodes : static_cast<int>(n);
}

int CusumNodes(double h) {
  const double n = std::ceil(24 + 3 * h);
  return n >= kMaxNodes ? kMaxNodes : static_cast<int>(n);
}

// Nystrom solution of the two-sided EWMA ARL equation with fixed limits +/- c (already scaled
// by sqrt(lambda / (2 - lambda))):
//   L(z) = 1 + (1/lambda) int_{-c}^{c} L(u) phi((u - (1 - lambda) z) / lambda - mu) du.
// Keeps the nodes and the solved L(z_j) so that L can be evaluated anywhere by the Nystrom
// interpolant (the vacl ARL needs it off the nodes).
class EwmaFixedArl {
 public:
  EwmaFixedArl(double lambda, double c, double mu, const Quadrature& q) : lambda_(lambda), mu_(mu) {
    const size_t n = q.x.size();
    z_.resize(n);
    w_.resize(n);
    for (size_t j = 0; j < n; ++j) {
      z_[j] = c * q.x[j];
      w_[j] = c * q.w[j];
    }
    std::vector<double> a(n * n);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) a[i * n + j] = -w_[j] * Kernel(z_[j], z_[i]);
      a[i * n + i] += 1;
    }
    g_.assign(n, 1.0);
    SolveInPlace(a, g_, n);
  }

  // ARL of the chart whose EWMA currently stands at z (inside the limits).
  double At(double z) const {
    double arl = 1;
    for (size_t j = 0; j < z_.size(); ++j) arl += w_[j] * Kernel(z_[j], z) * g_[j];
    return arl;
  }

 private:
  // Transition density of the next EWMA value u from the current one z.
  double Kernel(double u, double z) const {
    return NormalPdf((u - (1 - lambda_) * z) / lambda_ - mu_) / lambda_;
  }

  double lambda_;
  double mu_;
  std::vector<double> z_;
  std::vector<double> w_;
  std::vector<double> g_;
};

// Below kMinArlLambda the kernel is so narrow that the node cap loses accuracy and the vacl
// propagation needs ~14 / lambda steps of N^2 kernel evaluations (seconds at 1e-3): the ARL
// functions answer NaN rather than stall a caller.
constexpr double kMinArlLambda = 1e-3;

bool ValidEwma(double lambda, double L) {
  return std::isfinite(lambda) && lambda >= kMinArlLambda && lambda <= 1 && std::isfinite(L) &&
         L >= 0;
}

double EwmaArlFixedNodes(double lambda, double L, double mu, int nodes) {
  const double c = L * std::sqrt(lambda / (2 - lambda));
  return EwmaFixedArl(lambda, c, mu, GaussLegendre(nodes)).At(0.0);
}

// Variance-adjusted (vacl) limits c_i = c sqrt(1 - (1 - lambda)^(2i)). The sub-density f_i of
// the EWMA after i points without a signal is carried on each step's own nodes (the limits
// differ per step, so no common grid exists); once the limits equal the asymptotic ones to
// 1e-12 the chart is a fixed-limit chart started from f_i, whose ARL the Nystrom interpolant
// gives. ARL = sum_{n<m} P(RL > n) + int f_m(z) L(z) dz.
double EwmaArlVacl(double lambda, double L, double mu) {
  const double c_inf = L * std::sqrt(lambda / (2 - lambda));
  const int nodes = EwmaNodes(lambda, c_inf);
  const Quadrature q = GaussLegendre(nodes);
  const auto n = static_cast<size_t>(nodes);
  auto limit = [&](int64_t i) {
    return c_inf * std::sqrt(1 - std::pow(1 - lambda, 2.0 * static_cast<double>(i)));
  };
  auto kernel = [&](double u, double z) {
    return NormalPdf((u - (1 - lambda) * z) / lambda - mu) / lambda;
  };

  std::vector<double> z(n), w(n), f(n), z_next(n), w_next(n), f_next(n);
  int64_t i = 1;
  double c = limit(i);
  for (size_t j = 0; j < n; ++j) {
    z[j] = c * q.x[j];
    w[j] = c * q.w[j];
    f[j] = kernel(z[j], 0.0);  // the EWMA starts at the target
  }
  double arl = 1;  // P(RL > 0)
  constexpr int64_t kMaxSteps = 1'000'000;
  constexpr double kBand = 10;
  while (c_inf - c > 1e-12 * c_inf && i < kMaxSteps) {
    double survival = 0;
    for (size_t j = 0; j < n; ++j) survival += w[j] * f[j];
    arl += survival;  // P(RL > i)
    // With (almost) no mass left the rest cannot move the sum; stop early for large shifts.
    if (survival < 1e-20 * arl) return arl;
    const double c_next = limit(i + 1);
    for (size_t a = 0; a < n; ++a) {
      z_next[a] = c_next * q.x[a];
      w_next[a] = c_next * q.w[a];
      // Only z within 10 kernel widths contribute (the density beyond is < 1e-21 of its peak);
      // for small lambda that band is a fraction of the nodes.
      const double u = z_next[a];
      const auto first = static_cast<size_t>(
          std::lower_bound(z.begin(), z.end(), (u - lambda * (mu + kBand)) / (1 - lambda)) -
          z.begin());
      const auto last = static_cast<size_t>(
          std::upper_bound(z.begin(), z.end(), (u - lambda * (mu - kBand)) / (1 - lambda)) -
          z.begin());
      double sum = 0;
      for (size_t b = first; b < last; ++b) sum += w[b] * f[b] * kernel(u, z[b]);
      f_next[a] = sum;
    }
    z.swap(z_next);
    w.swap(w_next);
    f.swap(f_next);
    c = c_next;
    ++i;
  }
  const EwmaFixedArl fixed(lambda, c_inf, mu, q);
  for (size_t j = 0; j < n; ++j) arl += w[j] * f[j] * fixed.At(z[j]);
  return arl;
}

// Page's integral equation for the upper CUSUM S_t = max(0, S_{t-1} + x_t - k), signal when
// S > h, by Nystrom with an extra unknown for the atom at 0 (spc xc1_iglarl):
//   L(z) = 1 + L(0) Phi(k - z - mu) + int_0^h L(u) phi(u + k - z - mu) du.
double CusumArlOneSidedNodes(double k, double h, double mu, int nodes) {
  const Quadrature q = GaussLegendre(nodes);
  const auto n = static_cast<size_t>(nodes);
  const size_t m = n + 1;  // unknowns: L(z_0..z_{n-1}), L(0)
  std::vector<double> z(n), w(n);
  for (size_t j = 0; j < n; ++j) {
    z[j] = h / 2 * (q.x[j] + 1);
    w[j] = h / 2 * q.w[j];
  }
  std::vector<double> a(m * m);
  for (size_t i = 0; i <= n; ++i) {
    const double zi = i < n ? z[i] : 0.0;
    for (size_t j = 0; j < n; ++j) a[i * m + j] = -w[j] * NormalPdf(z[j] + k - zi - mu);
    a[i * m + n] = -NormalCdf(k - zi - mu);
    a[i * m + i] += 1;
  }
  std::vector<double> g(m, 1.0);
  SolveInPlace(a, g, m);
  return g[n];
}

bool ValidCusum(double k, double h, double mu) {
  return std::isfinite(k) && std::isfinite(h) && h >= 0 && std::isfinite(mu);
}

double CusumArlTwoSidedNodes(double k, double h, double mu, int nodes) {
  const double up = CusumArlOneSidedNodes(k, h, mu, nodes);
  const double down = CusumArlOneSidedNodes(k, h, -mu, nodes);
  return up * down / (up + down);
}

// Root of log(arl(x)) = log(arl0) on an increasing arl, bracketed by stepping x upwards from
// `start` by `step` up to `max_x` (NaN when arl0 is not reached).
template <typename Arl>
double SolveArl(Arl arl, double arl0, double lo, double start, double step, double max_x) {
  auto f = [&](double x) { return std::log(arl(x)) - std::log(arl0); };
  double hi = start;
  double f_hi = f(hi);
  double f_lo = f(lo);
  if (!(f_lo < 0)) return kNaN;
  while (f_hi < 0) {
    lo = hi;
    f_lo = f_hi;
    hi += step;
    if (hi > max_x) return kNaN;
    f_hi = f(hi);
  }
  if (std::isnan(f_hi)) return kNaN;
  if (f_hi == 0) return hi;
  std::uintmax_t max_iter = 200;
  const auto bracket = boost::math::tools::toms748_solve(
      f, lo, hi, f_lo, f_hi, boost::math::tools::eps_tolerance<double>(48), max_iter);
  return bracket.first + (bracket.second - bracket.first) / 2;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// EwmaChart
// ---------------------------------------------------------------------------------------------

// A state with no points since the reset is the reset state, whatever z it carries: the
// default-constructed EwmaState{} means "fresh" for any mu0.
EwmaChart::EwmaChart(EwmaParams params, EwmaState state) : params_(params), state_(state) {
  if (state_.i <= 0) Reset();
}

// A non-finite point is not absorbed: it would poison the persisted state forever. The step
// reports the unchanged state without a signal.
EwmaStep EwmaChart::Update(double x) {
  if (!std::isfinite(x)) {
    EwmaStep step = MakeEwmaStep(params_, state_);
    step.signal = false;
    return step;
  }
  state_.i += 1;
  state_.z = params_.lambda * x + (1 - params_.lambda) * state_.z;
  return MakeEwmaStep(params_, state_);
}

void EwmaChart::Reset() { state_ = EwmaState{0, params_.mu0}; }

// ---------------------------------------------------------------------------------------------
// TabularCusum
// ---------------------------------------------------------------------------------------------

TabularCusum::TabularCusum(CusumParams params, CusumState state) : params_(params), state_(state) {}

CusumStep TabularCusum::Update(double x) {
  if (std::isfinite(x)) {  // as for the EWMA, a non-finite point leaves the state alone
    state_.i += 1;
    const double allowance = params_.k * params_.sigma;
    state_.c_pos = std::max(0.0, x - (params_.mu0 + allowance) + state_.c_pos);
    state_.c_neg = std::max(0.0, (params_.mu0 - allowance) - x + state_.c_neg);
  }
  CusumStep step;
  step.i = state_.i;
  step.c_pos = state_.c_pos;
  step.c_neg = state_.c_neg;
  if (std::isfinite(x)) {
    const double limit = params_.h * params_.sigma;
    step.signal_up = state_.c_pos > limit;
    step.signal_down = state_.c_neg > limit;
  }
  return step;
}

void TabularCusum::Reset() { state_ = CusumState{}; }

// ---------------------------------------------------------------------------------------------
// PageHinkley
// ---------------------------------------------------------------------------------------------

PageHinkley::PageHinkley(PageHinkleyParams params, PageHinkleyState state)
    : params_(params), state_(state) {}

PageHinkleyStep PageHinkley::Update(double x) {
  PageHinkleyState& s = state_;
  const bool finite = std::isfinite(x);
  if (finite) {
    s.n += 1;
    s.mean += (x - s.mean) / static_cast<double>(s.n);
    s.m_up += x - s.mean - params_.delta;
    s.min_up = std::min(s.min_up, s.m_up);
    s.m_down += x - s.mean + params_.delta;
    s.max_down = std::max(s.max_down, s.m_down);
  }
  PageHinkleyStep step;
  step.n = s.n;
  step.ph_up = s.m_up - s.min_up;
  step.ph_down = s.max_down - s.m_down;
  step.signal_up = finite && step.ph_up > params_.threshold;
  step.signal_down = finite && step.ph_down > params_.threshold;
  return step;
}

void PageHinkley::Reset() { state_ = PageHinkleyState{}; }

// ---------------------------------------------------------------------------------------------
// Average run lengths
// ---------------------------------------------------------------------------------------------

double EwmaArl(double lambda, double L, double mu, EwmaLimits limits) {
  if (!ValidEwma(lambda, L) || !std::isfinite(mu)) return kNaN;
  if (limits == EwmaLimits::kVarianceAdjusted && lambda < 1) return EwmaArlVacl(lambda, L, mu);
  const double c = L * std::sqrt(lambda / (2 - lambda));
  return EwmaArlFixedNodes(lambda, L, mu, EwmaNodes(lambda, c));
}

double CusumArlOneSided(double k, double h, double mu) {
  if (!ValidCusum(k, h, mu)) return kNaN;
  return CusumArlOneSidedNodes(k, h, mu, CusumNodes(h));
}

double CusumArlTwoSided(double k, double h, double mu) {
  if (!ValidCusum(k, h, mu)) return kNaN;
  return CusumArlTwoSidedNodes(k, h, mu, CusumNodes(h));
}

// The node count is frozen over the search (taken for the widest limit it may try): a count
// that changed with L would make the ARL jump by its quadrature error between evaluations.
double EwmaCriticalL(double lambda, double arl0) {
  if (!ValidEwma(lambda, 1.0) || !std::isfinite(arl0) || !(arl0 > 1)) return kNaN;
  constexpr double kMaxL = 8;  // in-control ARL ~1e15 there: beyond that nothing is meaningful
  double hi = 1;
  while (hi < kMaxL && EwmaArl(lambda, hi, 0.0) < arl0) hi += 1;
  const int nodes = EwmaNodes(lambda, hi * std::sqrt(lambda / (2 - lambda)));
  auto arl = [&](double L) { return EwmaArlFixedNodes(lambda, L, 0.0, nodes); };
  return SolveArl(arl, arl0, std::max(0.0, hi - 1), hi, 1.0, kMaxL);
}

double CusumCriticalH(double k, double arl0) {
  if (!std::isfinite(k) || !std::isfinite(arl0) || !(arl0 > 1)) return kNaN;
  constexpr double kMaxH = 100;
  double hi = 1;
  while (hi < kMaxH && CusumArlTwoSided(k, hi, 0.0) < arl0) hi += 1;
  const int nodes = CusumNodes(hi);
  auto arl = [&](double h) { return CusumArlTwoSidedNodes(k, h, 0.0, nodes); };
  return SolveArl(arl, arl0, std::max(0.0, hi - 1), hi, 1.0, kMaxH);
}

}  // namespace perfwarden::stats
