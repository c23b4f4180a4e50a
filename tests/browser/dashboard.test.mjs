// SPDX-License-Identifier: Apache-2.0
// Real-browser tests of the perfwarden web dashboard (web/): starts perfwarden-server on a fresh
// embedded PostgreSQL, seeds a main-branch history with a planted step and a pull-request run
// with a planted regression, and drives headless Chromium through the pages.
//
//   cd tests/browser && npm ci
//   PERFWARDEN_SERVER=build/release/bin/perfwarden-server node tests/browser/dashboard.test.mjs
//
// Environment: PERFWARDEN_SERVER (required: the server binary), PERFWARDEN_WEB_ROOT (optional: serve
// web/ from this directory with --web-root; unset: the server's embedded copy),
// PERFWARDEN_SCREENSHOT_DIR (optional: write full-page PNGs there), PERFWARDEN_CHROMIUM (default
// /usr/bin/chromium). Exit code 0 when every check passed.
import {spawn} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

let chromium;
try {
  ({chromium} = await import('playwright-core'));
} catch {
  console.error('dashboard.test: playwright-core is missing; run `npm ci` in tests/browser');
  process.exit(2);
}

const SERVER = process.env.PERFWARDEN_SERVER;
const WEB_ROOT = process.env.PERFWARDEN_WEB_ROOT || '';
const SHOTS = process.env.PERFWARDEN_SCREENSHOT_DIR || '';
const CHROMIUM = process.env.PERFWARDEN_CHROMIUM || '/usr/bin/chromium';
const PROJECT = 'demo';
const TESTBED = 'ci-host';
const COMMITS = 40;
const STEP_AT = 25; // the 25th commit (index 24) is the first slow one
const REPS = 10;
const PAGE_TIMEOUT = 60_000;

const t0 = Date.now();
const log = (...args) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s]`, ...args);

class CheckError extends Error {}
function check(condition, what) {
  if (!condition) throw new CheckError(what);
}

// A seeded PRNG (mulberry32) and Box–Muller normals: the same data at every run.
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gauss = () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
  return {next, gauss};
}

const sha = (text) => createHash('sha1').update(text).digest('hex');
const uuid = (text) => {
  const x = createHash('sha256').update(text).digest('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-4${x.slice(13, 16)}-8${x.slice(17, 20)}-${x.slice(20, 32)}`;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const {port} = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function poll(what, fn, timeoutMs, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new CheckError(`timed out waiting for ${what}${last ? ': ' + last.message : ''}`);
    await sleep(intervalMs);
  }
}

// --- the server -----------------------------------------------------------------------------

function startServer(dataDir, port) {
  const args = ['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir];
  if (WEB_ROOT) args.push('--web-root', path.resolve(WEB_ROOT));
  const child = spawn(path.resolve(SERVER), args, {stdio: ['ignore', 'pipe', 'pipe']});
  const out = {text: '', exited: null};
  const logFile = fs.createWriteStream(path.join(dataDir, 'server.log'));
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk) => {
      out.text += chunk.toString();
      logFile.write(chunk);
    });
  }
  child.on('exit', (code, signal) => {
    out.exited = {code, signal};
  });
  return {child, out};
}

async function stopServer(server) {
  if (!server || server.out.exited) return;
  server.child.kill('SIGTERM');
  const deadline = Date.now() + 40_000;
  while (!server.out.exited && Date.now() < deadline) await sleep(100);
  if (!server.out.exited) {
    log('server did not stop after SIGTERM; killing it');
    server.child.kill('SIGKILL');
    await sleep(500);
  }
}

function client(base) {
  return async function call(method, url, token, body) {
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + url, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return {status: res.status, json, text};
  };
}

// --- the data -------------------------------------------------------------------------------

const BENCHMARKS = [
  {name: 'BM_Sort/16384', time: 1_250_000, bytes: 16384 * 4, step: true},
  {name: 'BM_Hash/64', time: 48_000, bytes: 64 * 1000, step: false},
  {name: 'BM_Copy/4096', time: 310_000, bytes: 4096 * 64, step: false},
];

function results(rng, factorFor) {
  const out = [];
  for (const b of BENCHMARKS) {
    const level = b.time * factorFor(b) * (1 + 0.01 * rng.gauss());
    const real = [];
    const cpu = [];
    const bps = [];
    for (let j = 0; j < REPS; j++) {
      const r = level * (1 + 0.004 * rng.gauss());
      real.push(Number(r.toFixed(3)));
      cpu.push(Number((r * 0.985 * (1 + 0.002 * rng.gauss())).toFixed(3)));
      bps.push(Number(((b.bytes / r) * 1e9).toFixed(1)));
    }
    out.push({suite: 'sample', benchmark: b.name, metric: 'real_time', unit: 'ns', direction: 'lower', values: real});
    out.push({suite: 'sample', benchmark: b.name, metric: 'cpu_time', unit: 'ns', direction: 'lower', values: cpu});
    out.push({suite: 'sample', benchmark: b.name, metric: 'bytes_per_second', unit: 'bytes/s', direction: 'higher', values: bps});
  }
  return out;
}

const CI = (k) => ({provider: 'github', repository_url: 'https://github.com/acme/demo',
  job_url: `https://github.com/acme/demo/actions/runs/${9000 + k}`, workflow: 'bench'});
const FINGERPRINT = {cpu_model: 'Test CPU 3000', cores: 2, kernel: '6.1.0', compiler: 'g++ 12.2.0', governor: 'performance'};

async function seed(call, token) {
  const rng = prng(20241124);
  const shas = Array.from({length: COMMITS}, (_, i) => sha(`perfwarden-browser-test commit ${i + 1}`));
  const runIds = [];
  const start = Date.parse('2024-05-01T08:00:00Z');
  for (let i = 0; i < COMMITS; i++) {
    const k = i + 1;
    const when = new Date(start + i * 3_600_000);
    const upload = {
      id: uuid(`main run ${k}`), project: PROJECT, branch: 'main', target_branch: 'main',
      commit: {sha: shas[i], parents: i ? [shas[i - 1]] : [], time: when.toISOString(),
        subject: k === STEP_AT ? 'Switch BM_Sort to a slower comparator' : `Commit number ${k}`,
        author: `Dev ${(k % 3) + 1} <dev${(k % 3) + 1}@example.com>`},
      ancestry: shas.slice(0, i).reverse(),
      testbed: {name: TESTBED, fingerprint: FINGERPRINT},
      ci: CI(k),
      started_at: new Date(when.getTime() + 60_000).toISOString(),
      finished_at: new Date(when.getTime() + 360_000).toISOString(),
      results: results(rng, (b) => (b.step && k >= STEP_AT ? 1.1 : 1)),
    };
    const res = await call('POST', `/api/v1/projects/${PROJECT}/runs`, token, upload);
    check(res.status === 201, `POST run ${k}: ${res.status} ${res.text}`);
    runIds.push(res.json.run.id);
  }
  const prSha = sha('perfwarden-browser-test slow-sort');
  const pr = {
    id: uuid('pr run slow-sort'), project: PROJECT, branch: 'slow-sort', target_branch: 'main',
    merge_base: shas[COMMITS - 1], ancestry: shas.slice().reverse(),
    commit: {sha: prSha, parents: [shas[COMMITS - 1]], time: new Date(start + COMMITS * 3_600_000).toISOString(),
      subject: 'Make BM_Sort/16384 10% slower', author: 'Dev 9 <dev9@example.com>'},
    testbed: {name: TESTBED, fingerprint: FINGERPRINT},
    ci: {...CI(100), pr: 42},
    results: results(rng, (b) => (b.step ? 1.1 * 1.1 : 1)),
  };
  const res = await call('POST', `/api/v1/projects/${PROJECT}/runs`, token, pr);
  check(res.status === 201, `POST PR run: ${res.status} ${res.text}`);
  return {shas, runIds, prRun: res.json.run.id};
}

// --- the browser checks ---------------------------------------------------------------------

async function main() {
  check(SERVER, 'PERFWARDEN_SERVER must name the perfwarden-server binary');
  check(fs.existsSync(SERVER), `PERFWARDEN_SERVER ${SERVER} does not exist`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfwarden-browser-'));
  fs.chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as postgres and must reach it
  let server = null;
  let browser = null;
  try {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    log(`starting ${SERVER} on ${origin}${WEB_ROOT ? ' with --web-root ' + WEB_ROOT : ' (embedded web files)'}`);
    server = startServer(dataDir, port);
    await poll('the server to be ready (GET /readyz)', async () => {
      if (server.out.exited) throw new CheckError(`the server exited (${JSON.stringify(server.out.exited)}):\n${server.out.text}`);
      const r = await fetch(origin + '/readyz').catch(() => null);
      return r && r.status === 200;
    }, 120_000, 300);
    // The first start writes its admin token to <data dir>/admin-token (0600), never to its output.
    check(!/pwt_[A-Za-z0-9_-]{43}/.test(server.out.text), 'the server output shows a token');
    const admin = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    log('server ready');
    const call = client(origin);
    let r = await call('POST', '/api/v1/projects', admin, {name: PROJECT});
    check(r.status === 201, `create project: ${r.status} ${r.text}`);
    r = await call('POST', `/api/v1/projects/${PROJECT}/tokens`, admin, {name: 'ci', scopes: ['ingest', 'read', 'triage']});
    check(r.status === 201, `create token: ${r.status} ${r.text}`);
    const token = r.json.token;
    r = await call('POST', `/api/v1/projects/${PROJECT}/tokens`, admin, {name: 'reader', scopes: ['read']});
    check(r.status === 201, `create read token: ${r.status} ${r.text}`);
    const readToken = r.json.token;

    log(`seeding ${COMMITS} main commits x ${REPS} repetitions (planted +10% in BM_Sort/16384 at commit ${STEP_AT}) and a PR run`);
    const {shas, runIds, prRun} = await seed(call, token);
    const alert = await poll('the history alert on BM_Sort/16384 real_time', async () => {
      const a = await call('GET', `/api/v1/projects/${PROJECT}/alerts?state=all&benchmark=BM_Sort%2F16384&metric=real_time`, token);
      return (a.json && a.json.alerts || []).find((x) => x.range.first_bad.sha === shas[STEP_AT - 1]);
    }, 180_000, 500);
    log(`alert ${alert.id} raised: ${alert.kind} ${(alert.magnitude * 100).toFixed(1)}% at ${alert.range.first_bad.sha.slice(0, 8)}`);
    // A bisect of the alert's range that found the planted commit, as `perfwarden bisect --alert`
    // posts its answer.
    r = await call('POST', `/api/v1/projects/${PROJECT}/bisects`, token, {alert_id: alert.id,
      good: shas[STEP_AT - 2], bad: shas[STEP_AT - 1], culprits: [{sha: shas[STEP_AT - 1]}]});
    check(r.status === 201, `POST bisect: ${r.status} ${r.text}`);
    const bisectId = r.json.bisect.id;
    r = await call('POST', `/api/v1/projects/${PROJECT}/runs/${prRun}/verdict`, token);
    check(r.status === 201 || r.status === 200, `POST verdict: ${r.status} ${r.text}`);
    check(r.json.verdict.outcome === 'regression', `the PR verdict is ${r.json.verdict.outcome}, expected regression`);
    log(`PR run ${prRun}: verdict ${r.json.verdict.outcome} ${JSON.stringify(r.json.verdict.counts)}`);

    browser = await chromium.launch({executablePath: CHROMIUM,
      args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run',
        '--disable-quic', '--disable-component-update', '--disable-sync']});
    const context = await browser.newContext({viewport: {width: 1400, height: 900}});
    const problems = [];
    const expected = []; // predicates (url, status, method) of answers >= 400 a check provokes
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin + '/') || url === origin) return route.continue();
      problems.push(`request to another origin: ${url}`);
      return route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT);
    const isExpected = (url, status, method) => expected.some((fn) => fn(url, status, method));
    page.on('console', (msg) => {
      if (msg.type() !== 'error' && msg.type() !== 'warning') return;
      const at = msg.location() && msg.location().url;
      // Chromium logs every answer >= 400 as "Failed to load resource"; those the test provoked are fine.
      const m = /status of (\d+)/.exec(msg.text());
      if (m && at && isExpected(at, Number(m[1]), null)) return;
      problems.push(`console ${msg.type()}: ${msg.text()} (${at || 'no location'})`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => {
      if (!req.url().startsWith(origin)) return; // reported by the route
      problems.push(`request failed: ${req.method()} ${req.url()} ${req.failure() && req.failure().errorText}`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400 && !isExpected(res.url(), res.status(), res.request().method())) {
        problems.push(`HTTP ${res.status()} for ${res.request().method()} ${res.url()}`);
      }
    });
    const assertClean = (where) => check(!problems.length, `${where}:\n  ${problems.join('\n  ')}`);

    async function open(hash, name) {
      await page.goto('about:blank');
      await page.goto(origin + '/' + hash);
      await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, {timeout: PAGE_TIMEOUT});
      const state = await page.evaluate(() => [document.body.dataset.state, document.body.dataset.error || '']);
      check(state[0] === 'ready', `${name}: the page ended in state ${state[0]}: ${state[1]}`);
      log(`${name}: ready`);
    }
    async function shot(file) {
      if (!SHOTS) return;
      fs.mkdirSync(SHOTS, {recursive: true});
      await page.screenshot({path: path.join(SHOTS, file), fullPage: true});
      log(`screenshot ${path.join(SHOTS, file)}`);
    }
    const attr = (locator, name) => locator.getAttribute(name);

    // (4) The project list; the token comes in the URL and must leave it.
    await open(`#/?token=${token}`, 'project list');
    check(await page.evaluate(() => localStorage.getItem('perfwarden.token')) === token, 'the token of the URL is stored');
    check(!page.url().includes('token='), `the token is removed from the URL: ${page.url()}`);
    check(await page.locator('[data-testid=project-link]', {hasText: PROJECT}).count() === 1, 'the project list shows demo');
    await shot('projects.png');

    // (4) The benchmark browser: search, alert summary.
    await open(`#/p/${PROJECT}`, 'benchmark browser');
    check(await page.locator('[data-testid=benchmark-link]').count() === BENCHMARKS.length, 'three benchmarks listed');
    check(Number(await page.locator('[data-testid=summary-open] .n').textContent()) >= 1, 'the alert summary counts the open alert');
    await page.fill('[data-testid=benchmark-search]', 'sort 16384');
    await poll('the search to filter', async () => await page.locator('[data-testid=benchmark-link]').count() === 1, 5000, 100);
    check((await page.locator('[data-testid=benchmark-link]').textContent()) === 'BM_Sort/16384', 'the search keeps BM_Sort/16384');
    await shot('browser.png');

    // (1) The series page of BM_Sort/16384: 40 x 10 points per metric, the alert at commit 25.
    await open(`#/p/${PROJECT}/series?suite=sample&benchmark=${encodeURIComponent('BM_Sort/16384')}`, 'series page');
    const charts = page.locator('[data-testid=series-chart]');
    check(await charts.count() === 3, `three charts (real_time, cpu_time, bytes_per_second), got ${await charts.count()}`);
    const realChart = page.locator('[data-testid=series-chart][data-metric=real_time]');
    check(await attr(realChart, 'data-points') === String(COMMITS * REPS), `real_time plots ${COMMITS * REPS} points, got ${await attr(realChart, 'data-points')}`);
    for (let i = 0; i < 3; i++) check(await attr(charts.nth(i), 'data-points') === String(COMMITS * REPS), `chart ${i} plots 400 points`);
    const marker = realChart.locator('[data-testid=alert-marker]');
    check(await marker.count() >= 1, 'the real_time chart has an alert marker');
    check(await attr(marker.first(), 'data-commit') === shas[STEP_AT - 1], `the marker is at commit ${STEP_AT} (${shas[STEP_AT - 1]}), got ${await attr(marker.first(), 'data-commit')}`);
    check(await attr(marker.first(), 'data-alert-id') === String(alert.id), 'the marker is the alert');
    check(await marker.first().isVisible(), 'the marker is visible');
    // Change points come after the page is ready (the server computes them on demand).
    await page.waitForSelector('[data-testid=series-charts][data-change-points=done]', {timeout: PAGE_TIMEOUT});
    const cp = realChart.locator('[data-testid=change-points]');
    check(await cp.count() === 1 && Number(await attr(cp, 'data-count')) >= 1, 'the change points are drawn');
    // Hover: the commit's details; wheel: a synced zoom; double-click: reset.
    const over = realChart.locator('.u-over');
    await realChart.scrollIntoViewIfNeeded();
    const box = await over.boundingBox();
    await page.mouse.move(box.x + box.width * 0.61, box.y + box.height / 2);
    const detailText = await poll('the hover details', async () => {
      const text = await page.locator('[data-testid=point-detail]').textContent();
      return shas.some((s) => text.includes(s)) ? text : null;
    }, 5000, 100);
    check(detailText.includes('Runs:'), `hovering shows a commit's details: ${detailText}`);
    check(await page.locator('.tooltip:not([hidden])').count() === 1, 'hovering shows a tooltip');
    const ranges = async () => page.locator('[data-testid=series-chart] .chart-plot').evaluateAll((els) => els.map((e) => [Number(e.dataset.xMin), Number(e.dataset.xMax)]));
    const before = await ranges();
    await page.mouse.wheel(0, -400);
    const zoomed = await poll('the wheel zoom', async () => {
      const now = await ranges();
      return now[0][1] - now[0][0] < before[0][1] - before[0][0] - 1 ? now : null;
    }, 5000, 100);
    check(zoomed.every((x) => Math.abs(x[0] - zoomed[0][0]) < 1e-9 && Math.abs(x[1] - zoomed[0][1]) < 1e-9), `the charts zoom together: ${JSON.stringify(zoomed)}`);
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await poll('the reset zoom', async () => {
      const now = await ranges();
      return now.every((x) => x[1] - x[0] >= COMMITS - 1) ? now : null;
    }, 5000, 100);
    await page.mouse.move(box.x + box.width * 0.61, box.y + box.height / 2);
    await shot('series.png');
    // A marker's label leads to its alert.
    await marker.first().locator('.label').click();
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && location.hash.includes('/alerts'), null, {timeout: PAGE_TIMEOUT});
    // The series page was 'ready' too when the hash changed: wait for the alert's row itself.
    await poll('the marker opens its alert', async () =>
      (await page.locator(`[data-testid=alert-row].highlight[data-alert-id="${alert.id}"]`).count()) === 1 ? true : null,
    PAGE_TIMEOUT, 100);
    assertClean('series page');

    // (2) The verdict page of the PR run: the planted regression first.
    await open(`#/p/${PROJECT}/runs/${prRun}/verdict`, 'verdict page');
    check(await attr(page.locator('[data-testid=verdict-banner]'), 'data-outcome') === 'regression', 'the banner says regression');
    const rows = page.locator('[data-testid=verdict-row]');
    check(await rows.count() === BENCHMARKS.length * 3, `one row per series, got ${await rows.count()}`);
    check(await attr(rows.first(), 'data-benchmark') === 'BM_Sort/16384' && await attr(rows.first(), 'data-verdict') === 'REGRESSION',
      `the first row is the planted regression, got ${await attr(rows.first(), 'data-benchmark')} ${await attr(rows.first(), 'data-verdict')}`);
    check(await page.locator('[data-testid=verdict-row] svg[data-testid=distribution]').count() === BENCHMARKS.length * 3, 'every row has a distribution plot');
    await shot('compare.png');
    // Sorting by a header, then back.
    await page.click('[data-testid=verdict-table] th[data-key=benchmark]');
    check(await attr(rows.first(), 'data-benchmark') === 'BM_Copy/4096', 'sorting by benchmark puts BM_Copy first');
    await page.click('[data-testid=verdict-table] th[data-key=verdict]');
    check(await attr(rows.first(), 'data-verdict') === 'REGRESSION', 'sorting by verdict puts a regression first');
    assertClean('verdict page');

    // (4) The run pages: a main run (no verdict, and no request for one: the run says so) and
    // the PR run.
    await open(`#/p/${PROJECT}/runs/${runIds[COMMITS - 1]}`, 'run page');
    check(await page.locator('[data-testid=result-row]').count() === BENCHMARKS.length * 3, 'the run page lists its 9 series');
    check(await page.locator('[data-testid=run-no-verdict]').count() === 1, 'the main run has no verdict');
    check((await page.locator('[data-testid=run-meta]').textContent()).includes(shas[COMMITS - 1]), 'the run page shows its commit');
    await shot('run-main.png');
    await open(`#/p/${PROJECT}/runs/${prRun}`, 'PR run page');
    check(await page.locator('[data-testid=run-verdict]').count() === 1, 'the PR run page shows its verdict');
    await shot('run.png');
    await open(`#/p/${PROJECT}/runs`, 'runs list');
    check(await page.locator('[data-testid=run-row]').count() === COMMITS + 1, `the runs list shows ${COMMITS + 1} runs`);
    await open(`#/p/${PROJECT}/compare?base=${runIds[COMMITS - 1]}&contender=${prRun}`, 'compare page');
    check(await attr(page.locator('[data-testid=verdict-row]').first(), 'data-benchmark') === 'BM_Sort/16384', 'compare: BM_Sort/16384 first');
    await shot('compare-runs.png');
    assertClean('run pages');

    // (3) The alerts page: a read-only token is refused with the API's message, the triage
    // token acknowledges.
    await page.evaluate((t) => localStorage.setItem('perfwarden.token', t), readToken);
    await open(`#/p/${PROJECT}/alerts`, 'alerts page (read token)');
    let row = page.locator(`[data-testid=alert-row][data-alert-id="${alert.id}"]`);
    check(await row.count() === 1, 'the alert is listed');
    expected.push((url, status, method) => status === 403 && url.endsWith(`/alerts/${alert.id}`) && method !== 'GET');
    await row.locator('[data-testid=triage-acknowledge]').click();
    await poll('the refusal', async () => /403/.test(await row.locator('[data-testid=triage-status]').textContent()), 10_000, 100);
    const refusal = await row.locator('[data-testid=triage-status]').textContent();
    check(/PERMISSION_DENIED/.test(refusal) && /triage/.test(refusal), `the refusal is explained: ${refusal}`);
    r = await call('GET', `/api/v1/projects/${PROJECT}/alerts/${alert.id}`, token);
    check(r.json.state === 'open' || (r.json.alert && r.json.alert.state === 'open'), 'the refused triage changed nothing');

    await page.evaluate((t) => localStorage.setItem('perfwarden.token', t), token);
    await open(`#/p/${PROJECT}/alerts`, 'alerts page');
    row = page.locator(`[data-testid=alert-row][data-alert-id="${alert.id}"]`);
    check((await row.locator('[data-testid=alert-state]').textContent()).trim() === 'open', 'the alert is open');
    check(await row.locator('[data-testid=bisect-hint]').count() === 1, 'the bisect hint is shown');
    const bisectText = await row.locator('[data-testid=bisect-status]').textContent();
    check(bisectText.includes(`Bisect #${bisectId}`) && bisectText.includes('succeeded'), `the bisect's state is shown: ${bisectText}`);
    check((await row.locator('[data-testid=bisect-culprit]').textContent()) === shas[STEP_AT - 1].slice(0, 12), 'the culprit is shown');
    await row.locator('[data-testid=triage-note]').fill('looking into it');
    await row.locator('[data-testid=triage-acknowledge]').click();
    await poll('the acknowledged state on the page', async () =>
      (await row.locator('[data-testid=alert-state]').textContent()).trim() === 'acknowledged', 15_000, 100);
    r = await call('GET', `/api/v1/projects/${PROJECT}/alerts/${alert.id}`, token);
    const stored = r.json.alert || r.json;
    check(stored.state === 'acknowledged', `the API says ${stored.state}, expected acknowledged`);
    check(stored.note === 'looking into it', `the note was stored: ${stored.note}`);

    // The alert's group (the step moved real_time, cpu_time and bytes_per_second of one commit
    // range): its head shows the members, and "Fixed" triages every one of them at once.
    check(Number.isInteger(stored.group_id), `the alert has a group: ${stored.group_id}`);
    const group = page.locator(`[data-testid=alert-group][data-group-id="${stored.group_id}"]`);
    check(await group.count() === 1, 'the alert is shown in its group');
    r = await call('GET', `/api/v1/projects/${PROJECT}/alert-groups/${stored.group_id}`, token);
    check(r.status === 200 && r.json.member_count >= 2, `the group has the step's alerts: ${r.text}`);
    const members = r.json.members.map((m) => m.id);
    check(await group.locator('[data-testid=alert-row]').count() === members.length, 'every member is listed under the group');
    check((await group.locator('[data-testid=group-state]').textContent()).trim() === 'open', 'the group is open');
    await group.locator('[data-testid=group-note]').fill('fixed by the revert');
    await group.locator('[data-testid=group-resolved]').click();
    await poll('the group triage on the page', async () =>
      /saved/.test(await group.locator('[data-testid=group-triage-status]').textContent()), 15_000, 100);
    for (const id of members) {
      const memberRow = group.locator(`[data-testid=alert-row][data-alert-id="${id}"]`);
      check((await memberRow.locator('[data-testid=alert-state]').textContent()).trim() === 'resolved', `member ${id} shows resolved`);
    }
    check((await group.locator('[data-testid=group-state]').textContent()).trim() === 'closed', 'the group shows closed');
    r = await call('GET', `/api/v1/projects/${PROJECT}/alert-groups/${stored.group_id}`, token);
    check(r.json.state === 'closed' && r.json.states.resolved === members.length, `the API says the group is closed: ${r.text}`);
    check(r.json.members.every((m) => m.note === 'fixed by the revert' && m.state_changed_by === 'ci'), 'every member has the note and the actor');
    log(`group ${stored.group_id} triaged: ${members.length} alerts resolved`);
    await shot('alerts.png');
    assertClean('alerts page');

    // Without a token the project's pages say that one is needed.
    await page.evaluate(() => localStorage.removeItem('perfwarden.token'));
    expected.push((url, status) => status === 401 && url.includes(`/api/v1/projects/${PROJECT}/`));
    await page.goto('about:blank');
    await page.goto(`${origin}/#/p/${PROJECT}`);
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, {timeout: PAGE_TIMEOUT});
    check(await page.evaluate(() => document.body.dataset.state) === 'error', 'without a token the benchmark browser fails');
    const needToken = await page.locator('[data-testid=msg-error]').first().textContent();
    check(/401 UNAUTHENTICATED/.test(needToken) && /Token/.test(needToken), `the page asks for a token: ${needToken}`);
    log('benchmark browser without a token: asks for one');

    // (6) and (5): nothing left the origin, no console errors/warnings, no failed request.
    assertClean('all pages');
    log('PASS: every check passed');
  } finally {
    if (browser) await browser.close().catch(() => {});
    await stopServer(server);
    if (server && server.out.exited) log(`server stopped (${JSON.stringify(server.out.exited)})`);
    fs.rmSync(dataDir, {recursive: true, force: true});
  }
}

try {
  await main();
} catch (err) {
  console.error(`FAIL: ${err instanceof CheckError ? err.message : err.stack || err}`);
  process.exitCode = 1;
}
