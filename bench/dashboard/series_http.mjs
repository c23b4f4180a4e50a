// SPDX-License-Identifier: Apache-2.0
// The load driver's HTTP client: one keep-alive agent to the server under test, requests timed
// to the last byte, and the paths of the series endpoint.
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';

import {BRANCH, PROJECT} from './series_config.mjs';
import {now} from './series_stats.mjs';

export const agent = new http.Agent({keepAlive: true, maxSockets: 16});
// Where the server listens; startServer sets the port.
export const BASE = {host: '127.0.0.1', port: 0};

// One HTTP request; resolves {status, body (Buffer), ms (to the last byte)}.
export function request(method, urlPath, {token, body, gzip = false} = {}) {
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
export async function requestOk(method, urlPath, opts) {
  const r = await request(method, urlPath, opts);
  if (r.status < 200 || r.status >= 300) {
    throw new Error(`${method} ${urlPath}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  }
  return r;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => resolve(port));
    });
  });
}

export const seriesPath = (benchmark, limit, raw) =>
  `/api/v1/projects/${PROJECT}/series?benchmark=${benchmark}&metric=real_time&branch=${BRANCH}` +
  `&limit=${limit}${raw ? '&raw=1' : ''}`;
