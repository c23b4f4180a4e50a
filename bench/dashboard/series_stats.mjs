// SPDX-License-Identifier: Apache-2.0
// Small helpers of the dashboard load driver: the clock, waiting, summaries of timings and
// how the tables print numbers.

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const now = () => Number(process.hrtime.bigint()) / 1e6;  // ms
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
export const summary = (xs) => ({median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length, all: xs});
export const f1 = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1));
export const f2 = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(2));
