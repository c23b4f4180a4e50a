#!/usr/bin/env node
// Load driver for the dashboard's series (the target: the series endpoint and page for
// 10,000 commits x 10 repetitions load in under 1 s). Recorded in docs/performance.md.
//
//   bash ci/setup.sh                        # Chromium, and playwright-core in tests/browser
//   cd ../.. && PERFGATE_SERVER=build/release/bin/perfgate-server \
//     PERFGATE_BENCH_OUT=/tmp/series_load.json node bench/dashboard/series_load.mjs
//
// What it does, in one run:
//  1. starts perfgate-server on its embedded PostgreSQL in a fresh data directory, with
//     `history: {enabled: false}` (the history worker would otherwise analyse every one of the
//     10,000 runs while we measure) and the dashboard served from disk (`--web-root web`);
//  2. seeds project `bench`, branch main: 10,000 commits (sha, parents, subject, author,
//     author_time), one run per commit with 10 repetitions of BM_Large (metrics real_time, ns,
//     and items_per_second; log-normal noise, two steps; a seeded PRNG, so every run of this
//     driver stores the same values); the last 1,000 commits' runs also carry BM_Small, the
//     1,000-commit series that is the page's baseline (the page always asks for limit=10000);
//  3. the endpoint: GET .../series?benchmark=BM_Large&metric=real_time&branch=main&limit=10000
//     &raw=1, the first (cold) request then N warm ones; in the same run the same endpoint with
//     limit=1000 and /healthz (baselines), raw=0, BM_Small, and .../change-points (which the
//     page asks for after it is ready); the 10k series also as browsers ask for it (gzip);
//  4. the page, in headless Chromium: a fresh browser context per repetition, from page.goto
//     to body[data-state=ready], for BM_Large (10,000 commits) and BM_Small (1,000 commits),
//     alternated; the JS heap when ready (CDP), the page's own request timings, and the
//     redraw of a zoom (a wheel event on the plot) and of the reset to the whole range (a
//     double click), timed inside the page.
// Prints a table; writes the figures as JSON to $PERFGATE_BENCH_OUT when set.
//
// Environment (all optional):
//   PERFGATE_SERVER         server binary (default build/release/bin/perfgate-server)
//   PERFGATE_WEB_ROOT       dashboard files served with --web-root (default web/ of the repo;
//                           "builtin" uses the copy built into the server)
//   PERFGATE_BENCH_OUT      JSON output path
//   PERFGATE_BENCH_DATA_DIR data directory to use and keep (a second run on it skips seeding)
//   PERFGATE_BENCH_COMMITS  commits (default 10000), PERFGATE_BENCH_BASE_COMMITS (1000),
//   PERFGATE_BENCH_REPS     repetitions per run (10), PERFGATE_BENCH_CONCURRENCY (6),
//   PERFGATE_BENCH_ENDPOINT_REPS warm requests per endpoint (10),
//   PERFGATE_BENCH_PAGE_REPS page loads per series (5), PERFGATE_BENCH_SKIP_PAGE=1,
//   PERFGATE_CHROMIUM       browser (default /usr/bin/chromium)
import {spawn} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';
import zlib from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const env = process.env;
const intEnv = (name, def) => (env[name] ? Number.parseInt(env[name], 10) : def);

const CFG = {
  server: path.resolve(repo, env.PERFGATE_SERVER || 'build/release/bin/perfgate-server'),
  webRoot: env.PERFGATE_WEB_ROOT === 'builtin' ? null : path.resolve(repo, env.PERFGATE_WEB_ROOT || 'web'),
  out: env.PERFGATE_BENCH_OUT || '',
  dataDir: env.PERFGATE_BENCH_DATA_DIR || '',
  commits: intEnv('PERFGATE_BENCH_COMMITS', 10000),
  baseCommits: intEnv('PERFGATE_BENCH_BASE_COMMITS', 1000),
  reps: intEnv('PERFGATE_BENCH_REPS', 10),
  concurrency: intEnv('PERFGATE_BENCH_CONCURRENCY', 6),
  endpointReps: intEnv('PERFGATE_BENCH_ENDPOINT_REPS', 10),
  pageReps: intEnv('PERFGATE_BENCH_PAGE_REPS', 5),
  skipPage: env.PERFGATE_BENCH_SKIP_PAGE === '1',
  // 1: the server analyses the history as it does by default (seeding then waits until every
  // run is analysed), so that change points are timed on a 10,000-point history.
  history: env.PERFGATE_BENCH_HISTORY === '1',
  chromium: env.PERFGATE_CHROMIUM || '/usr/bin/chromium',
};
const PROJECT = 'bench';
const BRANCH = 'main';
const LARGE = 'BM_Large';
const SMALL = 'BM_Small';
const SUITE = 'bench_suite';

// ---- small helpers -------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;  // ms
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const summary = (xs) => ({median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length, all: xs});
const f1 = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1));
const f2 = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(2));

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

const agent = new http.Agent({keepAlive: true, maxSockets: 16});
let BASE = {host: '127.0.0.1', port: 0};

// One HTTP request; resolves {status, body (Buffer), ms (to the last byte)}.
function request(method, urlPath, {token, body, gzip = false} = {}) {
  return new Promise((resolve, reject) => {
    const headers = {Accept: 'application/json'};
    if (token) headers.Authorization = 'Bearer ' + token;
    if (gzip) headers['Accept-Encoding'] = 'gzip';  // as browsers ask; inflated below, timed
    let payload = null;
    if (body !== undefined) {
      payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const t0 = now();
    const req = http.request({host: BASE.host, port: BASE.port, method, path: urlPath, headers, agent}, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const wire = Buffer.concat(chunks);
        const encoded = res.headers['content-encoding'] === 'gzip';
        const body = encoded ? zlib.gunzipSync(wire) : wire;
        resolve({status: res.statusCode, body, wireBytes: wire.length, encoded, ms: now() - t0});
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
async function requestOk(method, urlPath, opts) {
  const r = await request(method, urlPath, opts);
  if (r.status < 200 || r.status >= 300) {
    throw new Error(`${method} ${urlPath}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  }
  return r;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---- the server ----------------------------------------------------------------------------

async function startServer() {
  if (!fs.existsSync(CFG.server)) throw new Error(`no server binary at ${CFG.server} (set PERFGATE_SERVER)`);
  let dir = CFG.dataDir;
  const fresh = !dir || !fs.existsSync(path.join(dir, 'pg'));
  if (!dir) dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfgate-series-load.'));
  fs.mkdirSync(dir, {recursive: true});
  fs.chmodSync(dir, 0o755);  // as root, PostgreSQL runs as postgres and must reach it
  const config = path.join(dir, 'bench-server.yaml');
  fs.writeFileSync(config, `history:\n  enabled: ${CFG.history}\nlog:\n  level: warn\n`);
  const tokenFile = path.join(dir, 'bench-admin-token');
  let admin = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8').trim() : '';
  if (!admin) {
    admin = 'pgt_' + crypto.randomBytes(32).toString('base64url');
    fs.writeFileSync(tokenFile, admin + '\n', {mode: 0o600});
  }
  const port = await freePort();
  BASE = {host: '127.0.0.1', port};
  const args = ['--listen', `127.0.0.1:${port}`, '--data-dir', dir, '--config', config];
  if (CFG.webRoot) args.push('--web-root', CFG.webRoot);
  const log = fs.openSync(path.join(dir, 'server.out'), 'a');
  const child = spawn(CFG.server, args, {stdio: ['ignore', log, log], env: {...env, PERFGATE_ADMIN_TOKEN: admin}});
  let exited = null;
  child.on('exit', (code, signal) => { exited = {code, signal}; });
  const t0 = now();
  for (;;) {
    if (exited) throw new Error(`server exited (${JSON.stringify(exited)}); see ${path.join(dir, 'server.out')}`);
    try {
      const r = await request('GET', '/readyz');
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (now() - t0 > 120000) throw new Error('server not ready after 120 s');
    await sleep(200);
  }
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    for (let i = 0; i < 300 && !exited; i++) await sleep(100);
    if (!exited) child.kill('SIGKILL');
    if (!CFG.dataDir) fs.rmSync(dir, {recursive: true, force: true});
  };
  return {dir, admin, stop, fresh, startMs: now() - t0, pid: child.pid};
}

// ---- seeding -------------------------------------------------------------------------------

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
  const sha = sha1(`perfgate-bench-commit-${i}`);
  const parents = i > 0 ? [sha1(`perfgate-bench-commit-${i - 1}`)] : [];
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
    id: uuidOf(`perfgate-bench-run-${i}`),
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

async function setupProject(admin) {
  const created = await request('POST', '/api/v1/projects', {token: admin, body: {name: PROJECT, public_read: false}});
  if (created.status !== 201 && created.status !== 409) {
    throw new Error(`create project: ${created.status} ${created.body.toString()}`);
  }
  const tok = await requestOk('POST', `/api/v1/projects/${PROJECT}/tokens`,
    {token: admin, body: {name: 'series-load-' + Date.now(), scopes: ['ingest', 'read']}});
  return JSON.parse(tok.body.toString()).token;
}

const seriesPath = (benchmark, limit, raw) =>
  `/api/v1/projects/${PROJECT}/series?benchmark=${benchmark}&metric=real_time&branch=${BRANCH}` +
  `&limit=${limit}${raw ? '&raw=1' : ''}`;

async function seriesCount(token, benchmark) {
  const r = await request('GET', seriesPath(benchmark, 10000, false), {token});
  if (r.status === 404) return 0;
  if (r.status !== 200) throw new Error(`series: ${r.status} ${r.body.toString().slice(0, 200)}`);
  return JSON.parse(r.body.toString()).points.length;
}

async function seed(token) {
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

// ---- the endpoint --------------------------------------------------------------------------

async function measureEndpoint(token) {
  const large = seriesPath(LARGE, 10000, true);
  const cold = await requestOk('GET', large, {token});
  const coldJson = JSON.parse(cold.body.toString());
  const points = coldJson.points.length;
  const values = coldJson.points.reduce((a, p) => a + (p.values ? p.values.length : 0), 0);
  const reps = CFG.endpointReps;
  // Interleaved rounds so that the baselines see the same machine as the 10k figure.
  const rows = {
    large_raw: [], large_raw_gzip: [], large_1k_raw: [], healthz: [], large_noraw: [], small_raw: [],
    change_points: [],
  };
  const paths = {
    large_raw: large,
    large_raw_gzip: large,
    large_1k_raw: seriesPath(LARGE, 1000, true),
    healthz: '/healthz',
    large_noraw: seriesPath(LARGE, 10000, false),
    small_raw: seriesPath(SMALL, 10000, true),
    change_points: `/api/v1/projects/${PROJECT}/change-points?benchmark=${LARGE}&metric=real_time&branch=${BRANCH}`,
  };
  const bytes = {};
  const status = {};
  for (let k = 0; k < reps; k++) {
    for (const [key, p] of Object.entries(paths)) {
      if (key === 'change_points' && k >= Math.max(3, reps >> 1)) continue;
      const gzip = key === 'large_raw_gzip';
      const r = key === 'change_points' ? await request('GET', p, {token}) : await requestOk('GET', p, {token, gzip});
      if (gzip && !r.encoded) throw new Error('the server did not gzip the 10k series');
      rows[key].push(r.ms);
      bytes[key] = r.wireBytes;
      if (key === 'change_points') status.change_points = r.status;
    }
  }
  const parse = [];
  for (let k = 0; k < 3; k++) {
    const t0 = now();
    JSON.parse(cold.body.toString());
    parse.push(now() - t0);
  }
  const out = {cold_ms: cold.ms, points, values, client_json_parse_ms: median(parse)};
  for (const key of Object.keys(rows)) out[key] = {...summary(rows[key]), bytes: bytes[key]};
  out.change_points.status = status.change_points;  // 404 when history is disabled
  out.ratio_10k_over_1k = out.large_raw.median / out.large_1k_raw.median;
  out.ratio_10k_over_healthz = out.large_raw.median / out.healthz.median;
  out.per_commit_us = ((out.large_raw.median - out.large_1k_raw.median) / (points - Math.min(1000, points))) * 1000;
  return out;
}

// ---- the page ------------------------------------------------------------------------------

async function loadPlaywright() {
  for (const base of [path.join(repo, 'tests', 'browser')]) {
    try {
      const require = createRequire(path.join(base, 'package.json'));
      return require('playwright-core');
    } catch {
      // try the next
    }
  }
  throw new Error('playwright-core not found: run `bash ci/setup.sh` (npm ci in tests/browser)');
}

// Installed before the page's scripts: records performance.now() (ms since navigation start)
// when body[data-state] becomes ready or error.
const INIT_SCRIPT = ({token}) => {
  try {
    localStorage.setItem('perfgate.token', token);
  } catch {
    // storage disabled
  }
  window.__bench = {};
  const obs = new MutationObserver(() => {
    const s = document.body && document.body.dataset.state;
    if ((s === 'ready' || s === 'error') && !window.__bench.doneAt) {
      window.__bench.doneAt = performance.now();
      window.__bench.state = s;
    }
  });
  obs.observe(document, {attributes: true, subtree: true, attributeFilter: ['data-state']});
};

async function pageLoad(browser, token, benchmark) {
  const context = await browser.newContext({viewport: {width: 1400, height: 900}});
  try {
    await context.addInitScript(INIT_SCRIPT, {token});
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const url = `http://${BASE.host}:${BASE.port}/#/p/${PROJECT}/series?suite=${SUITE}&benchmark=${benchmark}` +
      `&metric=real_time&branch=${BRANCH}`;
    const t0 = now();
    await page.goto(url, {waitUntil: 'commit'});
    await page.waitForFunction(() => window.__bench && window.__bench.doneAt, null, {timeout: 60000, polling: 10});
    const wall = now() - t0;
    const info = await page.evaluate(() => {
      const chart = document.querySelector('[data-testid=series-chart]');
      const res = performance.getEntriesByType('resource').map((e) => ({name: e.name, ms: e.duration,
        start: e.startTime, end: e.responseEnd, bytes: e.encodedBodySize}));
      const series = res.filter((e) => /\/series\?/.test(e.name));
      const nav = performance.getEntriesByType('navigation')[0];
      const pick = (re) => res.filter((e) => re.test(e.name)).map((e) => e.ms);
      return {
        inPageMs: window.__bench.doneAt,
        state: window.__bench.state,
        error: document.body.dataset.error || null,
        points: chart ? Number(chart.dataset.points) : null,
        commits: chart ? Number(chart.dataset.commits) : null,
        seriesMs: pick(/\/series\?/),
        changePointsMs: pick(/\/change-points\?/),
        resources: res.length,
        // Where the time goes: start-up until the series request leaves (document, scripts,
        // the benchmark/branch/testbed lists), the series request(s), then until ready
        // (parsing, chart data, drawing, alerts, change points).
        domContentLoaded: nav ? nav.domContentLoadedEventEnd : null,
        seriesStart: series.length ? Math.min(...series.map((e) => e.start)) : null,
        seriesEnd: series.length ? Math.max(...series.map((e) => e.end)) : null,
      };
    });
    const heap = await cdp.send('Runtime.getHeapUsage');
    return {wall, ...info, heapUsedMB: heap.usedSize / 1048576, heapTotalMB: heap.totalSize / 1048576, page, context};
  } catch (err) {
    await context.close();
    throw err;
  }
}

// Redraw times inside the page (ms): a wheel zoom-in at the plot's centre, then a double click
// (reset to the whole range). uPlot redraws in a microtask after setScale, so a macrotask
// after the event sees the redraw done; the second figure waits for the next frame too.
async function redrawTimes(page, rounds) {
  return page.evaluate(async (rounds) => {
    const over = document.querySelector('[data-testid=series-chart] .u-over');
    if (!over) return null;
    const r = over.getBoundingClientRect();
    const cx = r.left + r.width / 2;
    const cy = r.top + r.height / 2;
    const macrotask = () => new Promise((res) => setTimeout(res, 0));
    const frame = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
    const zoom = [];
    const reset = [];
    const zoomFrame = [];
    const resetFrame = [];
    for (let k = 0; k < rounds; k++) {
      let t0 = performance.now();
      over.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: cx, clientY: cy, bubbles: true, cancelable: true}));
      await macrotask();
      zoom.push(performance.now() - t0);
      await frame();
      zoomFrame.push(performance.now() - t0);
      await new Promise((res) => setTimeout(res, 50));
      t0 = performance.now();
      over.dispatchEvent(new MouseEvent('dblclick', {clientX: cx, clientY: cy, bubbles: true}));
      await macrotask();
      reset.push(performance.now() - t0);
      await frame();
      resetFrame.push(performance.now() - t0);
      await new Promise((res) => setTimeout(res, 50));
    }
    return {zoom, zoomFrame, reset, resetFrame};
  }, rounds);
}

async function measurePage(token) {
  const {chromium} = await loadPlaywright();
  const browser = await chromium.launch({
    executablePath: CFG.chromium,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const runs = {large: [], small: []};
    const keep = (key, r) => runs[key].push({wall: r.wall, inPage: r.inPageMs, state: r.state, error: r.error,
      points: r.points, commits: r.commits, seriesMs: r.seriesMs, changePointsMs: r.changePointsMs,
      heapUsedMB: r.heapUsedMB, heapTotalMB: r.heapTotalMB, domContentLoaded: r.domContentLoaded,
      seriesStart: r.seriesStart, seriesEnd: r.seriesEnd});
    // A first load of each (browser start-up, the server's first page requests): not counted.
    const warm = {};
    for (const [key, bench] of [['large', LARGE], ['small', SMALL]]) {
      const r = await pageLoad(browser, token, bench);
      warm[key] = {wall: r.wall, state: r.state, error: r.error, points: r.points};
      await r.context.close();
      if (r.state !== 'ready') throw new Error(`${bench}: the page ended in state ${r.state}: ${r.error}`);
    }
    let redraw = null;
    for (let k = 0; k < CFG.pageReps; k++) {
      for (const [key, bench] of (k % 2 ? [['large', LARGE], ['small', SMALL]] : [['small', SMALL], ['large', LARGE]])) {
        const r = await pageLoad(browser, token, bench);
        keep(key, r);
        if (key === 'large' && k === CFG.pageReps - 1) redraw = await redrawTimes(r.page, 7);
        await r.context.close();
        console.log(`  page ${bench}: ${f1(r.wall)} ms to ${r.state} (in page ${f1(r.inPageMs)} ms), ` +
          `${r.points} repetitions of ${r.commits} commits, heap ${f1(r.heapUsedMB)} MB`);
      }
    }
    const agg = (list) => ({
      wall: summary(list.map((r) => r.wall)),
      in_page: summary(list.map((r) => r.inPage)),
      series_request_ms: median(list.flatMap((r) => r.seriesMs)),
      change_points_request_ms: median(list.flatMap((r) => r.changePointsMs)),
      heap_used_mb: median(list.map((r) => r.heapUsedMB)),
      phases: {
        dom_content_loaded_ms: median(list.map((r) => r.domContentLoaded)),
        until_series_request_ms: median(list.map((r) => r.seriesStart)),
        series_request_ms: median(list.map((r) => r.seriesEnd - r.seriesStart)),
        after_series_ms: median(list.map((r) => r.inPage - r.seriesEnd)),
      },
      heap_total_mb: median(list.map((r) => r.heapTotalMB)),
      states: [...new Set(list.map((r) => r.state))],
      points: list[0] && list[0].points,
      commits: list[0] && list[0].commits,
    });
    const out = {first_load: warm, large: agg(runs.large), small: agg(runs.small), runs};
    out.ratio_10k_over_1k = out.large.wall.median / out.small.wall.median;
    if (redraw) {
      out.redraw = {
        zoom_in_ms: summary(redraw.zoom), zoom_in_to_frame_ms: summary(redraw.zoomFrame),
        reset_full_ms: summary(redraw.reset), reset_full_to_frame_ms: summary(redraw.resetFrame),
      };
    }
    out.browser_version = browser.version();
    return out;
  } finally {
    await browser.close();
  }
}

// SHA-256 over the dashboard's files (names and contents), so that page figures name the
// version of web/ they were taken with.
function webDigest() {
  if (!CFG.webRoot || !fs.existsSync(CFG.webRoot)) return null;
  const hash = crypto.createHash('sha256');
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (fs.statSync(full).isDirectory()) walk(full);
      else hash.update(path.relative(CFG.webRoot, full) + '\0').update(fs.readFileSync(full));
    }
  };
  walk(CFG.webRoot);
  return hash.digest('hex').slice(0, 16);
}

// ---- main ----------------------------------------------------------------------------------

async function main() {
  const result = {
    date: new Date().toISOString(),
    machine: {cpus: os.cpus().length, cpu_model: os.cpus()[0] && os.cpus()[0].model, mem_gb: os.totalmem() / 2 ** 30,
      kernel: os.release(), node: process.version},
    config: {commits: CFG.commits, base_commits: CFG.baseCommits, reps: CFG.reps, server: CFG.server,
      web_root: CFG.webRoot || 'builtin', web_digest: webDigest(), history: CFG.history ? 'enabled (the default)' : 'disabled (history.enabled: false)'},
  };
  console.log(`perfgate series load: ${CFG.commits} commits x ${CFG.reps} repetitions; server ${CFG.server}; ` +
    `web ${result.config.web_root} (digest ${result.config.web_digest})`);
  const server = await startServer();
  console.log(`server ready in ${f1(server.startMs)} ms on ${BASE.host}:${BASE.port}, data ${server.dir}`);
  const stopOnSignal = () => { server.stop().finally(() => process.exit(130)); };
  process.on('SIGINT', stopOnSignal);
  process.on('SIGTERM', stopOnSignal);
  try {
    const token = await setupProject(server.admin);
    const have = await seriesCount(token, LARGE);
    if (have >= CFG.commits) {
      console.log(`seeding skipped: ${have} commits already stored`);
      result.seed = {skipped: true, commits: have};
    } else {
      console.log(`seeding ${CFG.commits} runs, ${CFG.concurrency} in flight...`);
      result.seed = await seed(token);
      console.log(`seeded ${result.seed.runs} runs in ${f1(result.seed.seconds)} s: ` +
        `${result.seed.runs_per_s.toFixed(0)} runs/s (${(result.seed.runs_per_s * CFG.reps * 2).toFixed(0)} samples/s)`);
    }

    if (CFG.history && !result.seed.skipped) {
      // The worker takes runs in arrival order; wait until it has analysed all of them (the
      // gauge counts since the server started: a reused data directory is not waited for).
      const t0 = now();
      let last = -1;
      for (;;) {
        const m = (await requestOk('GET', '/metrics')).body.toString();
        const runs = Number((/perfgate_history\{stat="runs"\} ([0-9.e+]+)/.exec(m) || [])[1] || 0);
        if (runs >= CFG.commits) break;
        if (Math.floor(runs / 1000) !== Math.floor(last / 1000)) console.log(`  history: ${runs} runs analysed`);
        last = runs;
        await sleep(1000);
      }
      result.history_wait_s = (now() - t0) / 1000;
      console.log(`history analysed ${CFG.commits} runs ${f1(result.history_wait_s)} s after seeding`);
    }
    console.log('endpoint...');
    const e = await measureEndpoint(token);
    result.endpoint = e;
    const row = (label, s, extra = '') =>
      console.log(`| ${label.padEnd(44)} | ${f1(s.median).padStart(8)} | ${f1(s.min).padStart(8)} | ${f1(s.max).padStart(8)} | ` +
        `${String(s.bytes ?? '').padStart(9)} | ${extra}`);
    console.log(`\nEndpoint (ms, ${CFG.endpointReps} warm requests each, interleaved; one keep-alive connection)`);
    console.log(`| ${'what'.padEnd(44)} | ${'median'.padStart(8)} | ${'min'.padStart(8)} | ${'max'.padStart(8)} | ${'bytes'.padStart(9)} |`);
    console.log(`| ${`series ${e.points} commits raw=1, first request`.padEnd(44)} | ${f1(e.cold_ms).padStart(8)} |`);
    row(`series ${e.points} commits raw=1 (${e.values} values)`, e.large_raw,
      `${f2(e.ratio_10k_over_1k)}x the 1k, ${f1(e.ratio_10k_over_healthz)}x healthz`);
    row('  the same, gzip (as browsers ask), inflated', e.large_raw_gzip, 'bytes on the wire');
    row('series 1,000 commits raw=1 (limit=1000)', e.large_1k_raw, 'baseline');
    row('series 10,000 commits raw=0', e.large_noraw);
    row('series BM_Small (1,000 commits) raw=1', e.small_raw);
    row(`change-points (after ready; HTTP ${e.change_points.status})`, e.change_points);
    row('/healthz', e.healthz, 'baseline');
    console.log(`per extra commit: ${f1(e.per_commit_us)} us; client JSON.parse of the 10k body: ${f1(e.client_json_parse_ms)} ms`);
    console.log(`1 s target, endpoint: ${e.large_raw.median < 1000 ? 'MET' : 'NOT MET'} (median ${f1(e.large_raw.median)} ms)`);

    if (!CFG.skipPage) {
      console.log('\npage (headless Chromium)...');
      const p = await measurePage(token);
      result.page = p;
      console.log(`\nPage (ms from page.goto to body[data-state=ready], fresh context each, median of ${CFG.pageReps})`);
      console.log('| what | median | min | max | in page (median) | series request | change-points request | JS heap used |');
      for (const [label, s] of [[`${p.large.commits} commits, ${p.large.points} repetitions`, p.large],
        [`${p.small.commits} commits, ${p.small.points} repetitions`, p.small]]) {
        console.log(`| ${label} | ${f1(s.wall.median)} | ${f1(s.wall.min)} | ${f1(s.wall.max)} | ${f1(s.in_page.median)} | ` +
          `${f1(s.series_request_ms)} | ${f1(s.change_points_request_ms)} | ${f1(s.heap_used_mb)} MB |`);
      }
      for (const [label, s] of [['10k', p.large], ['1k', p.small]]) {
        const ph = s.phases;
        console.log(`phases ${label} (in page, medians): DOMContentLoaded ${f1(ph.dom_content_loaded_ms)}, ` +
          `series request sent at ${f1(ph.until_series_request_ms)}, takes ${f1(ph.series_request_ms)}, ` +
          `then ${f1(ph.after_series_ms)} until ready`);
      }
      console.log(`ratio 10k / 1k: ${f2(p.ratio_10k_over_1k)}; first loads (not counted): ${f1(p.first_load.large.wall)} / ${f1(p.first_load.small.wall)} ms`);
      if (p.redraw) {
        console.log(`redraw, 10k commits: zoom-in (wheel) ${f1(p.redraw.zoom_in_ms.median)} ms (${f1(p.redraw.zoom_in_to_frame_ms.median)} to the next frame); ` +
          `reset to the whole range (double click) ${f1(p.redraw.reset_full_ms.median)} ms (${f1(p.redraw.reset_full_to_frame_ms.median)} to the next frame)`);
      }
      console.log(`1 s target, page: ${p.large.wall.median < 1000 ? 'MET' : 'NOT MET'} (median ${f1(p.large.wall.median)} ms)`);
    }
  } finally {
    await server.stop();
  }
  if (CFG.out) {
    const strip = (k, v) => (k === 'body' ? undefined : v);
    fs.writeFileSync(CFG.out, JSON.stringify(result, strip, 2) + '\n');
    console.log(`figures written to ${CFG.out}`);
  }
  agent.destroy();
}

main().catch((err) => {
  console.error('series_load:', err && err.stack ? err.stack : err);
  process.exit(1);
});
