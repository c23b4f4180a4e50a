#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Load driver for the dashboard's series (the target: the series endpoint and page for
// 10,000 commits x 10 repetitions load in under 1 s). Recorded in docs/performance.md.
//
//   bash ci/setup.sh                        # Chromium, and playwright-core in tests/browser
//   cd ../.. && PERFWARDEN_SERVER=build/release/bin/perfwarden-server \
//     PERFWARDEN_BENCH_OUT=/tmp/series_load.json node bench/dashboard/series_load.mjs
//
// What it does, in one run:
//  1. starts perfwarden-server on its embedded PostgreSQL in a fresh data directory, with
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
// Prints a table; writes the figures as JSON to $PERFWARDEN_BENCH_OUT when set.
//
// Environment (all optional):
//   PERFWARDEN_SERVER         server binary (default build/release/bin/perfwarden-server)
//   PERFWARDEN_WEB_ROOT       dashboard files served with --web-root (default web/ of the repo;
//                           "builtin" uses the copy built into the server)
//   PERFWARDEN_BENCH_OUT      JSON output path
//   PERFWARDEN_BENCH_DATA_DIR data directory to use and keep (a second run on it skips seeding)
//   PERFWARDEN_BENCH_COMMITS  commits (default 10000), PERFWARDEN_BENCH_BASE_COMMITS (1000),
//   PERFWARDEN_BENCH_REPS     repetitions per run (10), PERFWARDEN_BENCH_CONCURRENCY (6),
//   PERFWARDEN_BENCH_ENDPOINT_REPS warm requests per endpoint (10),
//   PERFWARDEN_BENCH_PAGE_REPS page loads per series (5), PERFWARDEN_BENCH_SKIP_PAGE=1,
//   PERFWARDEN_CHROMIUM       browser (default /usr/bin/chromium)
//
// The parts, one module each: series_config.mjs (these settings), series_stats.mjs (clock,
// summaries, number format), series_http.mjs (the timed HTTP client), series_server.mjs (the
// server and its database), series_seed.mjs (the seeded history), series_endpoint.mjs (the
// endpoint's timings), series_page.mjs (the page's timings in Chromium); this file runs them in
// order and prints the tables.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {CFG, LARGE} from './series_config.mjs';
import {measureEndpoint} from './series_endpoint.mjs';
import {BASE, agent} from './series_http.mjs';
import {measurePage} from './series_page.mjs';
import {seed, seriesCount, setupProject, waitForHistory} from './series_seed.mjs';
import {startServer} from './series_server.mjs';
import {f1, f2} from './series_stats.mjs';

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
  console.log(`perfwarden series load: ${CFG.commits} commits x ${CFG.reps} repetitions; server ${CFG.server}; ` +
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
      result.history_wait_s = await waitForHistory();
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
