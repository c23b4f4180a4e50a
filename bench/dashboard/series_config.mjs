// SPDX-License-Identifier: Apache-2.0
// The settings of the dashboard load driver (series_load.mjs), read from the environment, and
// the names it seeds and asks for. The settings are listed in series_load.mjs and README.md.
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..');
export const env = process.env;
const intEnv = (name, def) => (env[name] ? Number.parseInt(env[name], 10) : def);

export const CFG = {
  server: path.resolve(repo, env.PERFWARDEN_SERVER || 'build/release/bin/perfwarden-server'),
  webRoot: env.PERFWARDEN_WEB_ROOT === 'builtin' ? null : path.resolve(repo, env.PERFWARDEN_WEB_ROOT || 'web'),
  out: env.PERFWARDEN_BENCH_OUT || '',
  dataDir: env.PERFWARDEN_BENCH_DATA_DIR || '',
  commits: intEnv('PERFWARDEN_BENCH_COMMITS', 10000),
  baseCommits: intEnv('PERFWARDEN_BENCH_BASE_COMMITS', 1000),
  reps: intEnv('PERFWARDEN_BENCH_REPS', 10),
  concurrency: intEnv('PERFWARDEN_BENCH_CONCURRENCY', 6),
  endpointReps: intEnv('PERFWARDEN_BENCH_ENDPOINT_REPS', 10),
  pageReps: intEnv('PERFWARDEN_BENCH_PAGE_REPS', 5),
  skipPage: env.PERFWARDEN_BENCH_SKIP_PAGE === '1',
  // 1: the server analyses the history as it does by default (seeding then waits until every
  // run is analysed), so that change points are timed on a 10,000-point history.
  history: env.PERFWARDEN_BENCH_HISTORY === '1',
  chromium: env.PERFWARDEN_CHROMIUM || '/usr/bin/chromium',
};
export const PROJECT = 'bench';
export const BRANCH = 'main';
export const LARGE = 'BM_Large';
export const SMALL = 'BM_Small';
export const SUITE = 'bench_suite';
