// SPDX-License-Identifier: Apache-2.0
// Number, time and name formatting shared by the pages.

const TIME_UNITS = {ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1};

export function isTimeUnit(unit) {
  return Object.prototype.hasOwnProperty.call(TIME_UNITS, unit);
}

// Significant digits without trailing noise: 3 digits by default, tabular-friendly.
export function num(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '−∞';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e9 || abs < 1e-4)) return value.toExponential(digits - 1);
  if (abs >= 10 ** digits) return Math.round(value).toLocaleString('en-US');
  return Number(value.toPrecision(digits)).toLocaleString('en-US', {maximumFractionDigits: 12});
}

// A value in its unit, times scaled to a readable unit (1234567 ns -> "1.235 ms"), other units
// with SI prefixes (2.5e9 bytes/s -> "2.5 G bytes/s").
export function withUnit(value, unit, digits = 4) {
  if (value === null || value === undefined || !Number.isFinite(value)) return num(value, digits);
  if (isTimeUnit(unit)) {
    const seconds = value * TIME_UNITS[unit];
    const abs = Math.abs(seconds);
    const [scale, name] = abs >= 1 ? [1, 's'] : abs >= 1e-3 ? [1e-3, 'ms'] : abs >= 1e-6 ? [1e-6, 'µs'] : [1e-9, 'ns'];
    return num(seconds / scale, digits) + ' ' + name;
  }
  const abs = Math.abs(value);
  const prefixes = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [scale, prefix] of prefixes) {
    if (abs >= scale) return num(value / scale, digits) + prefix + (unit ? ' ' + unit : '');
  }
  return num(value, digits) + (unit ? ' ' + unit : '');
}

// A function that formats the ticks of one axis compactly (shared scale for a whole axis).
export function axisFormatter(unit) {
  return (value) => withUnit(value, unit, 3);
}

// +10.1% / −3.2%; a fraction in.
export function pct(fraction, digits = 1) {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return '–';
  const v = fraction * 100;
  const sign = v > 0 ? '+' : v < 0 ? '−' : '±';
  return sign + Math.abs(v).toFixed(digits) + '%';
}

export function pctRange(ci, digits = 1) {
  if (!Array.isArray(ci) || ci.length !== 2) return '';
  return '[' + pct(ci[0], digits) + ', ' + pct(ci[1], digits) + ']';
}

export function pValue(p) {
  if (p === null || p === undefined || !Number.isFinite(p)) return '–';
  if (p === 0) return '0';
  if (p < 1e-3) return p.toExponential(1);
  return p.toFixed(4);
}

export function shortSha(sha) {
  return sha ? String(sha).slice(0, 8) : '–';
}

// "2024-03-01 11:53" in UTC (performance data from CI hosts in many zones: one clock).
export function dateTime(text) {
  if (!text) return '–';
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) return String(text);
  return d.toISOString().slice(0, 16).replace('T', ' ');
}

export function dateOnly(text) {
  if (!text) return '';
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().slice(0, 10);
}

// How long ago, for lists ("5 min ago").
export function ago(text) {
  if (!text) return '–';
  const t = new Date(text).getTime();
  if (Number.isNaN(t)) return String(text);
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 90) return Math.round(s) + ' s ago';
  if (s < 5400) return Math.round(s / 60) + ' min ago';
  if (s < 129600) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' d ago';
}

export function duration(startText, endText) {
  if (!startText || !endText) return '–';
  const s = (new Date(endText).getTime() - new Date(startText).getTime()) / 1000;
  if (!Number.isFinite(s)) return '–';
  if (s < 120) return s.toFixed(1) + ' s';
  if (s < 7200) return (s / 60).toFixed(1) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

// Statistics of one sample (repetitions of a series).
export function median(sorted) {
  const n = sorted.length;
  if (!n) return NaN;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// NumPy's default (linear) percentile of a sorted array, q in [0, 1].
export function quantile(sorted, q) {
  const n = sorted.length;
  if (!n) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summary(values) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  let mean = 0;
  for (const v of sorted) mean += v;
  mean /= n || 1;
  let ss = 0;
  for (const v of sorted) ss += (v - mean) * (v - mean);
  const sd = n > 1 ? Math.sqrt(ss / (n - 1)) : NaN;
  return {
    n, sorted, mean, median: median(sorted), min: sorted[0], max: sorted[n - 1],
    q1: quantile(sorted, 0.25), q3: quantile(sorted, 0.75),
    cv: n > 1 && mean !== 0 ? sd / Math.abs(mean) : null,
  };
}

// The commit page of a repository URL from a run's ci object (GitHub, GitLab, others).
export function commitUrl(ci, sha) {
  if (!ci || !sha) return null;
  const repo = typeof ci.repository_url === 'string' ? ci.repository_url.replace(/\/+$/, '') : '';
  if (!/^https?:\/\//.test(repo)) return null;
  if (ci.provider === 'gitlab' || /gitlab/.test(repo)) return repo + '/-/commit/' + sha;
  return repo + '/commit/' + sha;
}

export function safeUrl(text) {
  return typeof text === 'string' && /^https?:\/\//.test(text) ? text : null;
}
