// SPDX-License-Identifier: Apache-2.0
// The dashboard shell: header (breadcrumbs, token control), hash router, page lifecycle.
// Every page ends with document.body.dataset.state = "ready" (or "error", with the message in
// data-error and on the page) so that tests and benchmarks know when it is drawn.
import {h, clear, route} from './dom.js';
import {getToken, setToken} from './api.js';
import {renderProjects, renderBrowser} from './projects.js';
import {renderSeries} from './series.js';
import {renderRuns, renderRun} from './runs.js';
import {renderVerdictPage, renderComparePage} from './verdict.js';
import {renderAlerts} from './alerts.js';

const main = document.getElementById('main');
const crumbs = document.getElementById('crumbs');
const tokenButton = document.getElementById('token-button');
const tokenPanel = document.getElementById('token-panel');

let generation = 0;
let cleanups = [];

function parseHash() {
  const raw = window.location.hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  const pathPart = q < 0 ? raw : raw.slice(0, q);
  const queryPart = q < 0 ? '' : raw.slice(q + 1);
  const segments = pathPart.split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const query = {};
  for (const [key, value] of new URLSearchParams(queryPart)) query[key] = value;
  return {segments, query, pathPart};
}

// A token passed in the URL (#/p/demo/alerts?token=pwt_x) is stored, then removed from the URL
// so that it does not stay in the history or get copied with a link.
function takeTokenFromHash(parsed) {
  if (!('token' in parsed.query)) return false;
  if (parsed.query.token) setToken(parsed.query.token);
  const rest = {...parsed.query};
  delete rest.token;
  const qs = new URLSearchParams(rest).toString();
  const hash = '#' + parsed.pathPart + (qs ? '?' + qs : '');
  window.history.replaceState(null, '', window.location.pathname + window.location.search + hash);
  return true;
}

const routes = [
  {match: (s) => s.length === 0, page: renderProjects, title: () => 'Projects'},
  {match: (s) => s[0] === 'p' && s.length === 2, page: renderBrowser, title: (s) => s[1]},
  {match: (s) => s[0] === 'p' && s.length === 3 && s[2] === 'series', page: renderSeries, title: (s, q) => q.benchmark || 'Series'},
  {match: (s) => s[0] === 'p' && s.length === 3 && s[2] === 'runs', page: renderRuns, title: () => 'Runs'},
  {match: (s) => s[0] === 'p' && s.length === 4 && s[2] === 'runs', page: renderRun, title: (s) => 'Run ' + s[3].slice(0, 8)},
  {match: (s) => s[0] === 'p' && s.length === 5 && s[2] === 'runs' && s[4] === 'verdict', page: renderVerdictPage, title: (s) => 'Verdict ' + s[3].slice(0, 8)},
  {match: (s) => s[0] === 'p' && s.length === 3 && s[2] === 'compare', page: renderComparePage, title: () => 'Compare'},
  {match: (s) => s[0] === 'p' && s.length === 3 && s[2] === 'alerts', page: renderAlerts, title: () => 'Alerts'},
];

function setState(state, errorText) {
  document.body.dataset.state = state;
  if (errorText) document.body.dataset.error = errorText;
  else delete document.body.dataset.error;
}

function renderCrumbs(segments) {
  clear(crumbs);
  crumbs.appendChild(h('a', {href: '#/', testid: 'nav-projects'}, 'Projects'));
  if (segments[0] !== 'p' || !segments[1]) return;
  const project = segments[1];
  const section = segments[2] || '';
  crumbs.appendChild(h('span', {class: 'sep'}, '/'));
  crumbs.appendChild(h('a', {href: route(['p', project]), class: 'project-name'}, project));
  const tab = (name, label, segs) => h('a', {
    href: route(segs), class: 'tab' + (section === name ? ' active' : ''), testid: 'nav-' + (name || 'benchmarks'),
  }, label);
  crumbs.appendChild(h('span', {class: 'tabs'},
    tab('', 'Benchmarks', ['p', project]),
    tab('runs', 'Runs', ['p', project, 'runs']),
    tab('alerts', 'Alerts', ['p', project, 'alerts'])));
}

async function render() {
  const parsed = parseHash();
  if (takeTokenFromHash(parsed)) {
    delete parsed.query.token;
  }
  for (const fn of cleanups) {
    try {
      fn();
    } catch {
      // A page's cleanup must not keep the next page from drawing.
    }
  }
  cleanups = [];
  const gen = ++generation;
  setState('loading');
  renderCrumbs(parsed.segments);
  clear(main);
  window.scrollTo(0, 0);
  const entry = routes.find((r) => r.match(parsed.segments));
  const ctx = {
    root: main,
    segments: parsed.segments,
    project: parsed.segments[0] === 'p' ? parsed.segments[1] : null,
    query: parsed.query,
    alive: () => gen === generation,
    onCleanup: (fn) => cleanups.push(fn),
    ready: () => {
      if (gen === generation) setState('ready');
    },
    fail: (text) => {
      if (gen === generation) setState('error', text);
    },
    // Replaces the page's query (filters) in the URL; the page is drawn again.
    setQuery: (query) => {
      const clean = {};
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') clean[k] = v;
      const qs = new URLSearchParams(clean).toString();
      const hash = '#' + parsed.pathPart + (qs ? '?' + qs : '');
      if (hash !== window.location.hash) window.location.hash = hash;
    },
  };
  if (!entry) {
    document.title = 'perfwarden · not found';
    main.appendChild(h('div', {class: 'msg msg-error', testid: 'msg-error'},
      'No such page: ' + window.location.hash + '. ', h('a', {href: '#/'}, 'Projects')));
    ctx.fail('no such page');
    return;
  }
  document.title = 'perfwarden · ' + entry.title(parsed.segments, parsed.query);
  try {
    await entry.page(ctx);
  } catch (err) {
    if (!ctx.alive()) return;
    const text = (err && err.message) || String(err);
    main.appendChild(h('div', {class: 'msg msg-error', testid: 'msg-error', role: 'alert'}, 'Error: ' + text));
    ctx.fail(text);
  }
}

// The token control: paste a token, kept in localStorage["perfwarden.token"].
function updateTokenButton() {
  const token = getToken();
  tokenButton.textContent = token ? 'Token: ' + token.slice(0, 12) + '…' : 'Token: none';
  tokenButton.classList.toggle('has-token', Boolean(token));
}

function buildTokenPanel() {
  const input = h('input', {type: 'password', id: 'token-input', testid: 'token-input', autocomplete: 'off',
    spellcheck: 'false', placeholder: 'pwt_…', size: 44});
  const save = h('button', {type: 'submit', class: 'primary', testid: 'token-save'}, 'Save');
  const clearButton = h('button', {type: 'button', testid: 'token-clear', onclick: () => {
    setToken('');
    input.value = '';
    tokenPanel.hidden = true;
    render();
  }}, 'Clear');
  const form = h('form', {class: 'token-form', onsubmit: (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    tokenPanel.hidden = true;
    render();
  }},
  h('label', {for: 'token-input'}, 'API token'), input, save, clearButton,
  h('div', {class: 'hint'}, 'Kept in this browser (localStorage) and sent as "Authorization: Bearer". ' +
    'Public projects need none; changing alerts needs the triage scope.'));
  tokenPanel.appendChild(form);
  tokenButton.addEventListener('click', () => {
    tokenPanel.hidden = !tokenPanel.hidden;
    if (!tokenPanel.hidden) {
      input.value = getToken();
      input.focus();
    }
  });
}

buildTokenPanel();
updateTokenButton();
window.addEventListener('perfwarden-token', updateTokenButton);
window.addEventListener('storage', updateTokenButton);
window.addEventListener('hashchange', render);
render();
