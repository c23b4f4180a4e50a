// SPDX-License-Identifier: Apache-2.0
// Times the dashboard's series page in headless Chromium (playwright-core, the browser tests'
// copy): a fresh browser context per load, from page.goto to body[data-state=ready], for the
// 10,000-commit series and the 1,000-commit baseline, alternated; the JS heap when ready, the
// page's own request timings, and the redraw of a zoom and of the reset to the whole range.
import path from 'node:path';
import {createRequire} from 'node:module';

import {BRANCH, CFG, LARGE, PROJECT, SMALL, SUITE, repo} from './series_config.mjs';
import {BASE} from './series_http.mjs';
import {f1, median, now, summary} from './series_stats.mjs';

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
    localStorage.setItem('perfwarden.token', token);
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

export async function measurePage(token) {
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
