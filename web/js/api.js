// SPDX-License-Identifier: Apache-2.0
// The REST API client: the bearer token from localStorage, errors as ApiError carrying the
// API's {"error": {"code", "message", "field"}}.
import {h} from './dom.js';

const TOKEN_KEY = 'perfwarden.token';

export function getToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage disabled: the token lasts as long as the page.
  }
  window.dispatchEvent(new CustomEvent('perfwarden-token'));
}

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field || null;
  }

  // One line for people: "403 PERMISSION_DENIED: the token lacks the triage scope (field x)".
  describe() {
    let text = (this.status ? this.status + ' ' : '') + (this.code ? this.code + ': ' : '') + this.message;
    if (this.field) text += ' (field ' + this.field + ')';
    return text;
  }

  get isAuth() {
    return this.status === 401 || this.status === 403;
  }
}

function projectPath(project, rest) {
  return '/api/v1/projects/' + encodeURIComponent(project) + (rest || '');
}

function buildUrl(path, params) {
  const url = new URL(path, window.location.origin);
  if (params) {
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined || value === null || value === '') continue;
      url.searchParams.set(key, String(value));
    }
  }
  return url.pathname + url.search;
}

async function request(method, path, {params, body, signal} = {}) {
  const headers = {Accept: 'application/json'};
  const token = getToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  const init = {method, headers, signal, credentials: 'omit', cache: 'no-store'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(buildUrl(path, params), init);
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'UNAVAILABLE', 'the server cannot be reached (' + (err && err.message) + ')');
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const e = data && data.error ? data.error : {};
    throw new ApiError(response.status, e.code || 'HTTP_' + response.status,
      e.message || response.statusText || 'request failed', e.field);
  }
  return data;
}

export const api = {
  get: (path, params, signal) => request('GET', path, {params, signal}),
  projects: () => request('GET', '/api/v1/projects'),
  project: (p) => request('GET', projectPath(p)),
  benchmarks: (p) => request('GET', projectPath(p, '/benchmarks')),
  metrics: (p) => request('GET', projectPath(p, '/metrics')),
  branches: (p) => request('GET', projectPath(p, '/branches')),
  testbeds: (p) => request('GET', projectPath(p, '/testbeds')),
  series: (p, params) => request('GET', projectPath(p, '/series'), {params}),
  changePoints: (p, params) => request('GET', projectPath(p, '/change-points'), {params}),
  runs: (p, params) => request('GET', projectPath(p, '/runs'), {params}),
  run: (p, id) => request('GET', projectPath(p, '/runs/' + encodeURIComponent(id))),
  verdict: (p, id) => request('GET', projectPath(p, '/runs/' + encodeURIComponent(id) + '/verdict')),
  compare: (p, params) => request('GET', projectPath(p, '/compare'), {params}),
  alerts: (p, params) => request('GET', projectPath(p, '/alerts'), {params}),
  alert: (p, id) => request('GET', projectPath(p, '/alerts/' + encodeURIComponent(id))),
  alertSummary: (p, params) => request('GET', projectPath(p, '/alert-summary'), {params}),
  triage: (p, id, body) => request('PATCH', projectPath(p, '/alerts/' + encodeURIComponent(id)), {body}),
  alertGroups: (p, params) => request('GET', projectPath(p, '/alert-groups'), {params}),
  triageGroup: (p, id, body) => request('PATCH', projectPath(p, '/alert-groups/' + encodeURIComponent(id)), {body}),
};

// An error as a block: the API's message, its field, and for 401/403 what to do about it.
export function errorBlock(err, what) {
  const block = h('div', {class: 'msg msg-error', testid: 'msg-error', role: 'alert'});
  const text = err instanceof ApiError ? err.describe() : String((err && err.message) || err);
  block.appendChild(h('div', {class: 'msg-title'}, (what ? what + ': ' : '') + text));
  if (err instanceof ApiError && err.isAuth) {
    block.appendChild(h('div', null,
      err.status === 401
        ? 'This needs a token. Paste one with the "Token" button at the top right (a project token with the read scope; triage needs the triage scope).'
        : 'The token in use may not do this. Paste a token of this project with the needed scope (read; triage to change alerts) with the "Token" button.'));
  }
  return block;
}

export function errorText(err) {
  return err instanceof ApiError ? err.describe() : String((err && err.message) || err);
}

// Runs fn on the items with at most `limit` in flight; results in order.
export async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker));
  return results;
}
