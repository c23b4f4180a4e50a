// SPDX-License-Identifier: Apache-2.0
// Times the series endpoint over HTTP: the 10,000-commit series (raw=1) cold and then warm,
// interleaved round by round with its baselines (limit=1000, /healthz) and the other requests
// the page makes (raw=0, BM_Small, change-points), and the 10k series gzipped as browsers ask.
import {BRANCH, CFG, LARGE, PROJECT, SMALL} from './series_config.mjs';
import {request, requestOk, seriesPath} from './series_http.mjs';
import {median, now, summary} from './series_stats.mjs';

  const large = seriesPath(LARGE, 10000, true);
export async function measureEndpoint(token) {
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
