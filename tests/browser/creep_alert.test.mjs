// SPDX-License-Identifier: Apache-2.0
// The dashboard's alerts page with a creep alert (a drift; kind "creep") in headless Chromium:
// web/ served from disk and the API answered with tests/fixtures/alerts/creep.json (the server's
// JSON of a creep alert, pinned by tests/unit/server/history/creep_alerts_test.cc) beside a step
// alert, so the page is tested without a server: the creep's badge, its range and slope per
// point, its colour (a slowdown of a lower-is-better metric is worse), and the kind filter.
//
//   cd tests/browser && npm ci
//   node tests/browser/creep_alert.test.mjs
//
// Environment: PERFWARDEN_CHROMIUM (default /usr/bin/chromium), PERFWARDEN_SCREENSHOT_DIR (optional:
// write a full-page PNG there). Exit code 0 when every check passed.
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

let chromium;
try {
  ({chromium} = await import('playwright-core'));
} catch {
  console.error('creep_alert.test: playwright-core is missing; run `npm ci` in tests/browser');
  process.exit(2);
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEB = path.join(ROOT, 'web');
const CHROMIUM = process.env.PERFWARDEN_CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.PERFWARDEN_SCREENSHOT_DIR || '';
const ORIGIN = 'http://perfwarden.test';
const PAGE_TIMEOUT = 30_000;

class CheckError extends Error {}
function check(condition, what) {
  if (!condition) throw new CheckError(what);
}

const creep = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures/alerts/creep.json'), 'utf8'));
const PROJECT = creep.project;
// A step alert of another range beside it: no "creep" key.
const step = {...creep, id: 7, kind: 'regression', position: 20, magnitude: 0.081, ci: [0.072, 0.09],
  detectors: ['e-divisive', 'mann-whitney'], group: 'cccccccccccc..dddddddddddd'};
delete step.creep;

const TYPES = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json'};
const listed = [];  // the kind parameter of every list request

async function answer(route) {
  const url = new URL(route.request().url());
  if (url.origin !== ORIGIN) return route.abort('blockedbyclient');
  const json = (status, body) => route.fulfill({status, contentType: 'application/json', body: JSON.stringify(body)});
  const api = `/api/v1/projects/${PROJECT}/alerts`;
  if (url.pathname === api) {
    const kind = url.searchParams.get('kind') || '';
    listed.push(kind);
    const all = [creep, step].filter((a) => !kind || a.kind === kind);
    return json(200, {alerts: all, next_cursor: null});
  }
  for (const a of [creep, step]) {
    if (url.pathname === `${api}/${a.id}`) return json(200, {...a, excerpt: [], history: [], bisects: []});
  }
  // The page also asks for the alert groups (none here: the alerts are shown by their ranges).
  if (url.pathname === `/api/v1/projects/${PROJECT}/alert-groups`) return json(200, {groups: [], next_cursor: null});
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

    await open(`#/p/${PROJECT}/alerts?state=all`, 'alerts page');
    const row = page.locator(`[data-testid=alert-row][data-alert-id="${creep.id}"]`);
    check(await row.count() === 1, 'the creep alert is listed');
    const badge = (await row.locator('.badge.k-creep').textContent()).trim();
    check(badge === 'creep', `the creep's badge: ${badge}`);
    const drift = (await row.locator('[data-testid=alert-creep]').textContent()).trim();
    check(drift === 'drift over points 61–119, +0.15% per point [+0.14%, +0.16%]', `the creep's range and slope: ${drift}`);
    check(await row.locator('.worse b').count() === 1, 'a creeping slowdown of a lower-is-better metric reads as worse');
    check((await row.locator('.worse b').textContent()).trim() === '+9.0%', 'the creep shows its total change');
    const colour = await row.locator('.badge.k-creep').evaluate((el) => getComputedStyle(el).backgroundColor);
    check(colour !== 'rgba(0, 0, 0, 0)', `the creep badge has a colour: ${colour}`);
    const other = page.locator(`[data-testid=alert-row][data-alert-id="${step.id}"]`);
    check(await other.count() === 1 && await other.locator('[data-testid=alert-creep]').count() === 0,
      'a step alert has no drift line');
    if (SHOTS) {
      fs.mkdirSync(SHOTS, {recursive: true});
      await page.screenshot({path: path.join(SHOTS, 'alerts-creep.png'), fullPage: true});
    }

    // The kind filter offers creep and asks the API for it.
    const options = await page.locator('[data-testid=alert-kind-filter] option').evaluateAll((els) => els.map((e) => e.value));
    check(JSON.stringify(options) === JSON.stringify(['', 'regression', 'improvement', 'creep']), `the kind filter: ${options}`);
    await page.selectOption('[data-testid=alert-kind-filter]', 'creep');
    await page.waitForFunction(() => location.hash.includes('kind=creep') && document.body.dataset.state === 'ready', null,
      {timeout: PAGE_TIMEOUT});
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=alert-row]').length === 1, null, {timeout: PAGE_TIMEOUT});
    check(listed.includes('creep'), `the list was asked for kind=creep: ${listed}`);
    check(await page.locator(`[data-testid=alert-row][data-alert-id="${creep.id}"]`).count() === 1, 'the filtered list holds the creep');
    check(!problems.length, `the page ran cleanly:\n  ${problems.join('\n  ')}`);
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
