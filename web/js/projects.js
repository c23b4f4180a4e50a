// SPDX-License-Identifier: Apache-2.0
// The project list (#/) and a project's benchmark browser (#/p/{project}).
import {h, clear, route, message} from './dom.js';
import {api, errorBlock, errorText} from './api.js';
import {dateTime, ago} from './format.js';

export async function renderProjects(ctx) {
  const root = ctx.root;
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, 'Projects')));
  let data;
  try {
    data = await api.projects();
  } catch (err) {
    if (!ctx.alive()) return;
    root.appendChild(errorBlock(err, 'Cannot list projects'));
    ctx.fail(errorText(err));
    return;
  }
  if (!ctx.alive()) return;
  const projects = (data && data.projects) || [];
  if (!projects.length) {
    root.appendChild(message('empty',
      'No project is visible. Without a token only public projects are listed; paste a token with the "Token" button, ' +
      'or create a project (POST /api/v1/projects with an admin token, docs/api.md).'));
    ctx.ready();
    return;
  }
  const rows = projects.map((p) => h('tr', {testid: 'project-row'},
    h('td', null, h('a', {href: route(['p', p.name]), testid: 'project-link'}, p.name)),
    h('td', null, p.public_read ? 'public' : 'token'),
    h('td', {class: 'num'}, dateTime(p.created_at)),
    h('td', null,
      h('a', {href: route(['p', p.name, 'runs'])}, 'runs'), ' · ',
      h('a', {href: route(['p', p.name, 'alerts'])}, 'alerts'))));
  root.appendChild(h('table', {class: 'data', testid: 'project-table'},
    h('thead', null, h('tr', null, h('th', null, 'Project'), h('th', null, 'Read access'),
      h('th', {class: 'num'}, 'Created (UTC)'), h('th', null, ''))),
    h('tbody', null, rows)));
  ctx.ready();
}

function summaryTiles(project, summary) {
  const byState = summary.by_state || {};
  const byKind = summary.by_kind || {};
  const tile = (n, label, href, testid) => h('a', {class: 'tile', href, testid},
    h('div', {class: 'n'}, String(n ?? 0)), h('div', {class: 'l'}, label));
  const fpr = summary.false_positive_rate;
  return h('div', {class: 'summary-tiles', testid: 'alert-summary'},
    tile(byState.open, 'open alerts', route(['p', project, 'alerts'], {state: 'open'}), 'summary-open'),
    tile(byState.acknowledged, 'acknowledged', route(['p', project, 'alerts'], {state: 'acknowledged'})),
    tile(byKind.regression, 'regressions (all)', route(['p', project, 'alerts'], {state: 'all', kind: 'regression'})),
    tile(byKind.improvement, 'improvements (all)', route(['p', project, 'alerts'], {state: 'all', kind: 'improvement'})),
    h('div', {class: 'tile'}, h('div', {class: 'n'}, fpr === null || fpr === undefined ? '–' : Math.round(fpr * 100) + '%'),
      h('div', {class: 'l'}, 'false-positive rate')));
}

export async function renderBrowser(ctx) {
  const {root, project} = ctx;
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, project),
    h('span', {class: 'sub'}, 'benchmarks'),
    h('a', {href: route(['p', project, 'runs']), testid: 'link-runs'}, 'Runs'),
    h('a', {href: route(['p', project, 'alerts']), testid: 'link-alerts'}, 'Alerts')));
  const summaryBox = h('div', null);
  root.appendChild(summaryBox);
  const [benchRes, summaryRes, runsRes, alertsRes] = await Promise.allSettled([
    api.benchmarks(project), api.alertSummary(project), api.runs(project, {limit: 1}),
    api.alerts(project, {state: 'open', limit: 500})]);
  if (!ctx.alive()) return;
  if (benchRes.status === 'rejected') {
    root.appendChild(errorBlock(benchRes.reason, 'Cannot read the benchmarks of ' + project));
    ctx.fail(errorText(benchRes.reason));
    return;
  }
  if (summaryRes.status === 'fulfilled') summaryBox.appendChild(summaryTiles(project, summaryRes.value));
  else summaryBox.appendChild(errorBlock(summaryRes.reason, 'Alert summary'));
  if (runsRes.status === 'fulfilled' && runsRes.value.runs && runsRes.value.runs[0]) {
    const last = runsRes.value.runs[0];
    summaryBox.appendChild(h('div', {class: 'muted'}, 'Latest run: ',
      h('a', {href: route(['p', project, 'runs', last.id])}, last.branch || '(no branch)', ' @ ',
        (last.commit || '').slice(0, 8)), ' on ', last.testbed || '–', ', ', ago(last.created_at)));
  }
  const benchmarks = (benchRes.value && benchRes.value.benchmarks) || [];
  if (!benchmarks.length) {
    root.appendChild(message('empty', 'No benchmark results yet. Runs posted with `perfwarden run` ' +
      '(or POST /api/v1/projects/' + project + '/runs) appear here.'));
    ctx.ready();
    return;
  }
  benchmarks.sort((a, b) => (a.suite || '').localeCompare(b.suite || '') || a.name.localeCompare(b.name, 'en', {numeric: true}));
  // Open alerts per benchmark, shown next to its name.
  const openAlerts = new Map();
  if (alertsRes.status === 'fulfilled') {
    for (const a of alertsRes.value.alerts || []) {
      const key = a.series.suite + '\x1f' + a.series.benchmark;
      const entry = openAlerts.get(key) || {regression: 0, improvement: 0};
      entry[a.kind === 'improvement' ? 'improvement' : 'regression']++;
      openAlerts.set(key, entry);
    }
  }
  const search = h('input', {type: 'search', placeholder: 'Filter benchmarks (suite or name; space-separated words)',
    testid: 'benchmark-search', size: 50, value: ctx.query.q || ''});
  const count = h('span', {class: 'muted'});
  const list = h('div', {class: 'bench-list', testid: 'benchmark-list'});
  root.appendChild(h('div', {class: 'toolbar'}, search, count));
  root.appendChild(list);
  const LIMIT = 2000;
  const draw = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const matches = benchmarks.filter((b) => {
      const text = ((b.suite || '') + ' ' + b.name).toLowerCase();
      return words.every((w) => text.includes(w));
    });
    count.textContent = matches.length + ' of ' + benchmarks.length + ' benchmarks' +
      (matches.length > LIMIT ? ' (first ' + LIMIT + ' shown)' : '');
    clear(list);
    let suite = null;
    let ul = null;
    for (const b of matches.slice(0, LIMIT)) {
      if (b.suite !== suite || !ul) {
        suite = b.suite;
        ul = h('ul');
        list.appendChild(h('div', {class: 'bench-suite'}, h('h3', null, suite || '(no suite)'), ul));
      }
      const metrics = Array.isArray(b.metrics) ? b.metrics.map((m) => m.name).join(', ') : '';
      ul.appendChild(h('li', {testid: 'benchmark-item'},
        h('a', {href: route(['p', project, 'series'], {suite: b.suite, benchmark: b.name}), testid: 'benchmark-link'}, b.name),
        metrics ? h('span', {class: 'metrics'}, metrics) : null,
        alertBadges(openAlerts.get(b.suite + '\x1f' + b.name), project, b)));
    }
    if (!matches.length) list.appendChild(message('empty', 'No benchmark matches "' + search.value + '".'));
  };
  search.addEventListener('input', () => {
    draw();
    // Keep the filter in the URL without drawing the page again.
    const url = route(['p', project], {q: search.value});
    window.history.replaceState(null, '', url);
  });
  draw();
  ctx.ready();
}

function alertBadges(counts, project, b) {
  if (!counts) return null;
  const link = route(['p', project, 'alerts'], {state: 'open'});
  return [
    counts.regression ? h('a', {href: link, class: 'badge k-regression', testid: 'benchmark-alerts', style: {marginLeft: '6px'},
      title: 'open regression alerts of ' + b.name}, counts.regression + ' regression' + (counts.regression === 1 ? '' : 's')) : null,
    counts.improvement ? h('a', {href: link, class: 'badge k-improvement', style: {marginLeft: '6px'},
      title: 'open improvement alerts of ' + b.name}, counts.improvement + ' improvement' + (counts.improvement === 1 ? '' : 's')) : null,
  ];
}
