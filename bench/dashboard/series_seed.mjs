// SPDX-License-Identifier: Apache-2.0
// Seeds the series the load driver measures: project `bench`, branch main, one run per commit
// with synthetic results (a seeded PRNG, so every run of the driver stores the same values),
// uploaded through the ingest API; then, with history on, waits for the worker to analyse them.
import crypto from 'node:crypto';

import {BRANCH, CFG, LARGE, PROJECT, SMALL, SUITE} from './series_config.mjs';
import {request, requestOk, seriesPath} from './series_http.mjs';
import {now, sleep} from './series_stats.mjs';

// mulberry32: a small seeded PRNG, so every run seeds the same data.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function gaussian(rand) {
  let u = 0;
  while (u === 0) u = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

function sha1(text) {
  return crypto.createHash('sha1').update(text).digest('hex');
}
function uuidOf(text) {
  const h = crypto.createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
const WORDS = ['Speed up', 'Refactor', 'Fix', 'Tune', 'Inline', 'Vectorise', 'Cache', 'Simplify', 'Revert', 'Split'];
const PARTS = ['the parser', 'hash lookups', 'the allocator', 'sorting', 'I/O buffering', 'the scheduler', 'logging', 'string handling'];

// The level of BM_Large's real_time at commit i (ns): a slow drift and two steps.
function level(i, n) {
  let l = 1.2e6 * (1 + 0.01 * Math.sin(i / 700));
  if (i >= Math.floor(n * 0.3)) l *= 1.08;  // a regression
  if (i >= Math.floor(n * 0.7)) l *= 0.94;  // an improvement
  return l;
}

function makeUpload(i, n, reps, baseFrom) {
  const rand = prng(0x5eed0000 + i);
  const sha = sha1(`perfwarden-bench-commit-${i}`);
  const parents = i > 0 ? [sha1(`perfwarden-bench-commit-${i - 1}`)] : [];
  const t = new Date(Date.UTC(2024, 0, 1) + i * 3600 * 1000);
  const l = level(i, n);
  const rt = [];
  const ips = [];
  for (let r = 0; r < reps; r++) {
    const v = l * Math.exp(0.02 * gaussian(rand) + (rand() < 0.02 ? 0.1 : 0));  // CV ~2%, rare outliers
    rt.push(Math.round(v * 100) / 100);
    ips.push(Math.round((1024 * 1e9 / v) * 1000) / 1000);
  }
  const results = [
    {suite: SUITE, benchmark: LARGE, metric: 'real_time', unit: 'ns', direction: 'lower', values: rt},
    {suite: SUITE, benchmark: LARGE, metric: 'items_per_second', unit: 'items/s', direction: 'higher', values: ips},
  ];
  if (i >= baseFrom) {
    const s = [];
    for (let r = 0; r < reps; r++) s.push(Math.round(52000 * Math.exp(0.03 * gaussian(rand)) * 100) / 100);
    results.push({suite: SUITE, benchmark: SMALL, metric: 'real_time', unit: 'ns', direction: 'lower', values: s});
  }
  return {
    id: uuidOf(`perfwarden-bench-run-${i}`),
    project: PROJECT,
    branch: BRANCH,
    commit: {
      sha, parents, time: t.toISOString().replace('.000Z', 'Z'),
      subject: `${WORDS[i % WORDS.length]} ${PARTS[(i * 7) % PARTS.length]} (change ${i})`,
      author: `Dev ${i % 17} <dev${i % 17}@example.com>`,
    },
    testbed: {name: 'bench-host', fingerprint: {cpu_model: 'synthetic', cores: 2}},
    started_at: new Date(t.getTime() + 600 * 1000).toISOString(),
    finished_at: new Date(t.getTime() + 900 * 1000).toISOString(),
    results,
  };
}

export async function setupProject(admin) {
  const created = await request('POST', '/api/v1/projects', {token: admin, body: {name: PROJECT, public_read: false}});
  if (created.status !== 201 && created.status !== 409) {
    throw new Error(`create project: ${created.status} ${created.body.toString()}`);
  }
  const tok = await requestOk('POST', `/api/v1/projects/${PROJECT}/tokens`,
    {token: admin, body: {name: 'series-load-' + Date.now(), scopes: ['ingest', 'read']}});
  return JSON.parse(tok.body.toString()).token;
}

export async function seriesCount(token, benchmark) {
  const r = await request('GET', seriesPath(benchmark, 10000, false), {token});
  if (r.status === 404) return 0;
  if (r.status !== 200) throw new Error(`series: ${r.status} ${r.body.toString().slice(0, 200)}`);
  return JSON.parse(r.body.toString()).points.length;
}

export async function seed(token) {
  const n = CFG.commits;
  const baseFrom = n - CFG.baseCommits;
  let next = 0;
  let done = 0;
  let bytes = 0;
  const t0 = now();
  let lastReport = t0;
  async function worker() {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const body = JSON.stringify(makeUpload(i, n, CFG.reps, baseFrom));
      bytes += body.length;
      let r;
      for (let attempt = 0; ; attempt++) {
        r = await request('POST', `/api/v1/projects/${PROJECT}/runs`, {token, body});
        if (r.status !== 503 || attempt >= 5) break;
        await sleep(200 * (attempt + 1));
      }
      if (r.status !== 201 && r.status !== 200) {
        throw new Error(`POST run ${i}: ${r.status} ${r.body.toString().slice(0, 300)}`);
      }
      done++;
      if (done % 1000 === 0) {
        const t = now();
        console.log(`  seeded ${done}/${n} runs  (${((1000 * 1000) / (t - lastReport)).toFixed(0)} runs/s for the last 1,000)`);
        lastReport = t;
      }
    }
  }
  await Promise.all(Array.from({length: CFG.concurrency}, worker));
  const s = (now() - t0) / 1000;
  return {runs: n, seconds: s, runs_per_s: n / s, mean_upload_bytes: bytes / n, concurrency: CFG.concurrency};
}


// With history on: the worker takes runs in arrival order; wait until it has analysed all of
// them (the gauge counts since the server started: a reused data directory is not waited for).
// Returns the seconds waited.
export async function waitForHistory() {
  const t0 = now();
  let last = -1;
  for (;;) {
    const m = (await requestOk('GET', '/metrics')).body.toString();
    const runs = Number((/perfwarden_history\{stat="runs"\} ([0-9.e+]+)/.exec(m) || [])[1] || 0);
    if (runs >= CFG.commits) break;
    if (Math.floor(runs / 1000) !== Math.floor(last / 1000)) console.log(`  history: ${runs} runs analysed`);
    last = runs;
    await sleep(1000);
  }
  return (now() - t0) / 1000;
}
