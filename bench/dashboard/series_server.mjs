// SPDX-License-Identifier: Apache-2.0
// Starts the perfwarden-server under test on its embedded PostgreSQL in a data directory of its
// own (fresh, or $PERFWARDEN_BENCH_DATA_DIR kept between runs), and stops it.
import {spawn} from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {CFG, env} from './series_config.mjs';
import {BASE, freePort, request} from './series_http.mjs';
import {now, sleep} from './series_stats.mjs';

export async function startServer() {
  if (!fs.existsSync(CFG.server)) throw new Error(`no server binary at ${CFG.server} (set PERFWARDEN_SERVER)`);
  let dir = CFG.dataDir;
  const fresh = !dir || !fs.existsSync(path.join(dir, 'pg'));
  if (!dir) dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfwarden-series-load.'));
  fs.mkdirSync(dir, {recursive: true});
  fs.chmodSync(dir, 0o755);  // as root, PostgreSQL runs as postgres and must reach it
  const config = path.join(dir, 'bench-server.yaml');
  fs.writeFileSync(config, `history:\n  enabled: ${CFG.history}\nlog:\n  level: warn\n`);
  const tokenFile = path.join(dir, 'bench-admin-token');
  let admin = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8').trim() : '';
  if (!admin) {
    admin = 'pwt_' + crypto.randomBytes(32).toString('base64url');
    fs.writeFileSync(tokenFile, admin + '\n', {mode: 0o600});
  }
  const port = await freePort();
  BASE.host = '127.0.0.1';
  BASE.port = port;
  const args = ['--listen', `127.0.0.1:${port}`, '--data-dir', dir, '--config', config];
  if (CFG.webRoot) args.push('--web-root', CFG.webRoot);
  const log = fs.openSync(path.join(dir, 'server.out'), 'a');
  const child = spawn(CFG.server, args, {stdio: ['ignore', log, log], env: {...env, PERFWARDEN_ADMIN_TOKEN: admin}});
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
