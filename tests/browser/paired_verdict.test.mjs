// SPDX-License-Identifier: Apache-2.0
// The dashboard's pages of a paired verdict (baseline and pull request measured side by side) in
// headless Chromium: web/ served from disk and the API answered with
// tests/fixtures/verdicts/paired.json (wire::EncodeVerdict's output, checked by
// tests/unit/runner/report/paired_render_test.cc), so the pages are tested without a server.
//
//   cd tests/browser && npm ci
//   node tests/browser/paired_verdict.test.mjs
//
// Environment: PERFWARDEN_CHROMIUM (default /usr/bin/chromium), PERFWARDEN_SCREENSHOT_DIR (optional:
// write full-page PNGs there). Exit code 0 when every check passed.
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

let chromium;
try {
  ({chromium} = await import('playwright-core'));
} catch {
  console.error('paired_verdict.test: playwright-core is missing; run `npm ci` in tests/browser');
  process.exit(2);
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEB = path.join(ROOT, 'web');
const CHROMIUM = process.env.PERFWARDEN_CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.PERFWARDEN_SCREENSHOT_DIR || '';
const ORIGIN = 'http://perfwarden.test';
const PROJECT = 'demo';
const PAGE_TIMEOUT = 30_000;

class CheckError extends Error {}
function check(condition, what) {
  if (!condition) throw new CheckError(what);
}

const verdict = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/verdicts/paired.json'), 'utf8'));
const RUN = verdict.run_id;

// The run as GET .../runs/{id} answers it, without samples (a paired verdict's blocks are not
// the run's upload).
const runAnswer = {
  run: {id: RUN, project: PROJECT, branch: verdict.branch, commit: verdict.commit, testbed: verdict.testbed, pr: verdict.pr,
    created_at: verdict.created_at, sample_count: 0},
  upload: {id: RUN, project: PROJECT, branch: verdict.branch, target_branch: 'main', commit: {sha: verdict.commit},
    testbed: {name: verdict.testbed}, results: []},
  verdict: {id: verdict.id},
};

const TYPES = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json'};

// Every request of the page: the dashboard's files from web/, the two API answers, 404 else.
async function answer(route) {
  const url = new URL(route.request().url());
  if (url.origin !== ORIGIN) return route.abort('blockedbyclient');
  const json = (status, body) => route.fulfill({status, contentType: 'application/json', body: JSON.stringify(body)});
  const api = `/api/v1/projects/${PROJECT}/runs/${RUN}`;
  if (url.pathname === api + '/verdict') return json(200, {verdict});
  if (url.pathname === api) return json(200, runAnswer);
  if (url.pathname.startsWith('/api/')) return json(404, {error: {code: 'NOT_FOUND', message: 'not in this test'}});
  const file = url.pathname === '/' ? 'index.html' : url.pathname.replace(/^\/ui\//, '');
  const full = path.join(WEB, file);
  if (!full.startsWith(WEB + path.sep) || !fs.existsSync(full)) return route.fulfill({status: 404, body: 'no ' + file});
  return route.fulfill({status: 200, contentType: TYPES[path.extname(full)] || 'application/octet-stream', body: fs.readFileSync(full)});
}

async function main() {
  const browser = await chromium.launch({executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run']});
  try {
    const context = await browser.newContext({viewport: {width: 1400, height: 900}});
    await context.route('**/*', answer);
    // about:blank has no storage; the dashboard's pages do.
    await context.addInitScript(() => {
      if (location.protocol === 'http:') localStorage.setItem('perfwarden.token', 'pwt_test');
    });
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT);
    const problems = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    const open = async (hash, name) => {
      await page.goto('about:blank');
      await page.goto(ORIGIN + '/' + hash);
      await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, {timeout: PAGE_TIMEOUT});
      const state = await page.evaluate(() => [document.body.dataset.state, document.body.dataset.error || '']);
      check(state[0] === 'ready', `${name}: the page ended in state ${state[0]}: ${state[1]}`);
    };
    const text = async (selector) => (await page.locator(selector).first().textContent()).trim();

    await open(`#/p/${PROJECT}/runs/${RUN}/verdict`, 'paired verdict page');
    check(await page.locator('[data-testid=verdict-banner]').getAttribute('data-outcome') === 'regression', 'the banner says regression');
    check(await text('[data-testid=verdict-banner] [data-count=unstable]') === '1 unstable', 'the banner counts the unstable row');
    check(await text('[data-testid=verdict-banner] [data-count=regression]') === '1 regression', 'the banner counts the regression');
    check((await text('[data-testid=verdict-banner]')).includes('baseline 01234567 (side by side)'), 'the banner names the side-by-side baseline');
    const paired = await text('[data-testid=verdict-paired]');
    check(paired === 'measured side by side on this host against 0123456789ab: 13 blocks of 5 repetitions each (look 3 of 5), ' +
      'stopped: time_budget; geomean change +2.10% [+0.4%, +3.9%]', `the paired summary: ${paired}`);
    check((await text('[data-testid=unstable-advice]')).startsWith('UNSTABLE results do not fail the job'), 'the advice on unstable rows');

    const rows = page.locator('[data-testid=verdict-row]');
    const order = await rows.evaluateAll((els) => els.map((e) => e.dataset.verdict + ' ' + e.dataset.benchmark));
    check(JSON.stringify(order) === JSON.stringify(['REGRESSION BM_Sort/16384', 'UNSTABLE BM_Hash/64', 'IMPROVEMENT BM_Copy/4096',
      'EQUIVALENT BM_Sort/1024']), `rows in the reports' order: ${order}`);
    const unstable = page.locator('[data-testid=verdict-row][data-verdict=UNSTABLE]');
    const detail = (await unstable.locator('[data-testid=unstable-detail]').textContent()).trim();
    check(detail === 'UNSTABLE: noise 8.1% per block; ~92 blocks (460 repetitions) would decide it', `the unstable row's detail: ${detail}`);
    check((await unstable.locator('[data-testid=change]').textContent()).startsWith('+3.1%'), 'the unstable row shows its change');
    const colours = await page.evaluate(() => ['UNSTABLE', 'EQUIVALENT', 'INCONCLUSIVE'].map((v) => {
      const el = document.createElement('span');
      el.className = 'badge v-' + v;
      document.body.appendChild(el);
      const colour = getComputedStyle(el).backgroundColor;
      el.remove();
      return colour;
    }));
    check(colours[0] !== colours[1] && colours[0] !== colours[2] && colours[0] !== 'rgba(0, 0, 0, 0)',
      `UNSTABLE badges have their own colour: ${colours}`);
    const regression = page.locator('[data-testid=verdict-row][data-verdict=REGRESSION] [data-testid=paired-detail]');
    check((await regression.textContent()).trim() === 'side by side: 6 blocks, noise 2.1% per block', 'a decided row shows its blocks and noise');
    // Sorting by verdict keeps UNSTABLE between INCONCLUSIVE and IMPROVEMENT.
    await page.click('[data-testid=verdict-table] th[data-key=verdict]');
    check(await rows.nth(1).getAttribute('data-verdict') === 'UNSTABLE', 'sorting by verdict puts UNSTABLE second');
    if (SHOTS) {
      fs.mkdirSync(SHOTS, {recursive: true});
      await page.screenshot({path: path.join(SHOTS, 'verdict-paired.png'), fullPage: true});
    }

    await open(`#/p/${PROJECT}/runs/${RUN}`, 'run page');
    const summary = await text('[data-testid=run-verdict]');
    check(summary.includes('1 regression, 1 unstable, 1 improvement, 1 equivalent'), `the run's verdict counts the unstable row: ${summary}`);
    check(summary.includes('side by side vs 01234567'), `the run's verdict names the side-by-side baseline: ${summary}`);
    check(!problems.length, `the pages ran cleanly:\n  ${problems.join('\n  ')}`);
    console.log('PASS: every check passed');
  } finally {
    await browser.close().catch(() => {});
  }
}

try {
  await main();
} catch (err) {
  console.error(`FAIL: ${err instanceof CheckError ? err.message : err.stack || err}`);
  process.exitCode = 1;
}
