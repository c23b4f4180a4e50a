// SPDX-License-Identifier: Apache-2.0
// The runs list (#/p/{p}/runs) and a run's page (#/p/{p}/runs/{id}): metadata, its verdict,
// its results.
import {h, route, message, select} from './dom.js';
import {api, errorBlock, errorText} from './api.js';
import {shortSha, dateTime, ago, duration, withUnit, summary, safeUrl, commitUrl, pct} from './format.js';

export async function renderRuns(ctx) {
  const {root, project, query} = ctx;
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, 'Runs'), h('span', {class: 'sub'}, project)));
  const branchRes = await api.branches(project).catch(() => null);
  if (!ctx.alive()) return;
  const branches = branchRes ? (branchRes.branches || []).map((b) => b.name) : [];
  const branch = query.branch || '';
  if (branch && !branches.includes(branch)) branches.push(branch);
  const tbody = h('tbody');
  const more = h('button', {type: 'button', class: 'load-more', testid: 'runs-more', hidden: true}, 'Load more');
  const baseSel = {base: null, contender: null};
  const compareButton = h('button', {type: 'button', class: 'primary', disabled: true, testid: 'compare-selected', onclick: () => {
    window.location.hash = route(['p', project, 'compare'], {base: baseSel.base, contender: baseSel.contender});
  }}, 'Compare selected');
  root.appendChild(h('div', {class: 'toolbar'},
    h('label', null, 'Branch', select({testid: 'runs-branch', onchange: (e) => ctx.setQuery({branch: e.target.value})},
      [{value: '', label: 'all branches'}, ...branches], branch)),
    compareButton, h('span', {class: 'muted'}, 'pick a base (B) and a contender (C) to compare two runs')));
  const table = h('table', {class: 'data', testid: 'runs-table'},
    h('thead', null, h('tr', null, ['B', 'C', 'Stored (UTC)', 'Branch', 'Commit', 'Testbed', 'PR', 'Samples', 'Run']
      .map((t, i) => h('th', {class: i === 7 ? 'num' : ''}, t)))), tbody);
  root.appendChild(table);
  root.appendChild(more);
  const pick = (which, id) => {
    baseSel[which] = id;
    compareButton.disabled = !(baseSel.base && baseSel.contender && baseSel.base !== baseSel.contender);
  };
  let cursor = null;
  let count = 0;
  async function load() {
    more.disabled = true;
    const res = await api.runs(project, {branch: branch || undefined, limit: 50, cursor: cursor || undefined});
    for (const r of res.runs || []) {
      count++;
      tbody.appendChild(h('tr', {testid: 'run-row'},
        h('td', null, h('input', {type: 'radio', name: 'base', title: 'base', onchange: () => pick('base', r.id)})),
        h('td', null, h('input', {type: 'radio', name: 'contender', title: 'contender', onchange: () => pick('contender', r.id)})),
        h('td', {class: 'nowrap'}, dateTime(r.created_at), h('span', {class: 'faint'}, ' ' + ago(r.created_at))),
        h('td', null, r.branch || '–'),
        h('td', {class: 'mono'}, shortSha(r.commit)),
        h('td', null, r.testbed || '–'),
        h('td', null, r.pr ? '#' + r.pr : ''),
        h('td', {class: 'num'}, String(r.sample_count ?? '')),
        h('td', null, h('a', {href: route(['p', project, 'runs', r.id]), class: 'mono', testid: 'run-link'}, r.id))));
    }
    cursor = res.next_cursor || null;
    more.hidden = !cursor;
    more.disabled = false;
  }
  more.addEventListener('click', () => load().catch((err) => root.appendChild(errorBlock(err, 'Cannot load more runs'))));
  try {
    await load();
  } catch (err) {
    if (!ctx.alive()) return;
    table.remove();
    root.appendChild(errorBlock(err, 'Cannot list runs'));
    ctx.fail(errorText(err));
    return;
  }
  if (!ctx.alive()) return;
  if (!count) {
    table.remove();
    root.appendChild(message('empty', branch ? 'No run on branch ' + branch + '.' : 'No run yet. `perfwarden run` posts them.'));
  }
  ctx.ready();
}

function verdictSummary(v, project, runId) {
  const c = v.counts || {};
  const parts = ['regression', 'inconclusive', 'unstable', 'improvement', 'new', 'equivalent', 'pass', 'ignored']
    .filter((k) => c[k]).map((k) => c[k] + ' ' + k);
  const regressions = (v.results || []).filter((r) => r.verdict === 'REGRESSION')
    .sort((a, b) => Math.abs(b.change) - Math.abs(a.change)).slice(0, 5);
  return h('div', {class: 'banner o-' + v.outcome, testid: 'run-verdict'},
    h('span', {class: 'outcome'}, v.outcome.replace('_', ' ').toUpperCase()),
    h('span', null, parts.join(', ') || 'no results'),
    v.baseline ? h('span', null, 'vs ', v.baseline.branch, ' @ ', h('span', {class: 'mono'}, shortSha(v.baseline.commit)))
      : v.paired ? h('span', null, 'side by side vs ', h('span', {class: 'mono'}, shortSha(v.paired.baseline_commit)))
        : h('span', null, 'no baseline'),
    h('a', {href: route(['p', project, 'runs', runId, 'verdict']), testid: 'verdict-link'}, 'full verdict →'),
    regressions.length ? h('div', {style: {width: '100%'}}, regressions.map((r) =>
      h('div', null, h('span', {class: 'badge v-REGRESSION'}, 'REGRESSION'), ' ', r.benchmark, ' ', r.metric, ' ', h('b', {class: 'worse'}, pct(r.change))))) : null);
}

export async function renderRun(ctx) {
  const {root, project} = ctx;
  const runId = ctx.segments[3];
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, 'Run'), h('span', {class: 'sub mono'}, runId)));
  const [runRes] = await Promise.allSettled([api.run(project, runId)]);
  if (!ctx.alive()) return;
  if (runRes.status === 'rejected') {
    const err = runRes.reason;
    if (err.status === 404) {
      root.appendChild(message('empty', 'No run ' + runId + ' in project ' + project + '. ', h('a', {href: route(['p', project, 'runs'])}, 'All runs')));
      ctx.ready();
      return;
    }
    root.appendChild(errorBlock(err, 'Cannot read the run'));
    ctx.fail(errorText(err));
    return;
  }
  const {run, upload} = runRes.value;
  // The run names its newest verdict (null: none), so a run without one costs no 404.
  let verdictRes = {status: 'rejected', reason: {status: 404}};
  if (runRes.value.verdict !== null) {
    [verdictRes] = await Promise.allSettled([api.verdict(project, runId)]);
    if (!ctx.alive()) return;
  }
  const commit = upload.commit || {};
  const ci = upload.ci || {};
  const jobUrl = safeUrl(ci.job_url);
  const cUrl = commitUrl(ci, commit.sha);
  const fp = (upload.testbed && upload.testbed.fingerprint) || {};
  const row = (k, ...v) => h('tr', null, h('th', null, k), h('td', null, ...v));
  const isPr = upload.target_branch && upload.target_branch !== upload.branch;
  root.appendChild(h('div', {class: 'panel', testid: 'run-meta'}, h('table', {class: 'kv'}, h('tbody', null,
    row('Commit', cUrl ? h('a', {href: cUrl, target: '_blank', rel: 'noopener noreferrer', class: 'mono'}, commit.sha) : h('span', {class: 'mono'}, commit.sha),
      commit.subject ? h('span', null, ' · ', h('b', null, commit.subject)) : null),
    row('Author', commit.author || '–', commit.time ? ' · ' + dateTime(commit.time) + ' UTC' : ''),
    row('Branch', run.branch || '–', isPr ? ' → ' + upload.target_branch + ' (pull request' + (run.pr ? ' #' + run.pr : '') + ')' : '',
      upload.merge_base ? h('span', {class: 'muted'}, ' · merge-base ', h('span', {class: 'mono'}, shortSha(upload.merge_base))) : null),
    row('Testbed', run.testbed || '–', Object.keys(fp).length ? h('span', {class: 'muted'}, ' · ' +
      ['cpu_model', 'cores', 'kernel', 'compiler', 'governor'].filter((k) => fp[k] !== undefined).map((k) => fp[k]).join(' · ')) : null),
    row('CI', ci.provider || '–', jobUrl ? [' · ', h('a', {href: jobUrl, target: '_blank', rel: 'noopener noreferrer', testid: 'ci-link'}, 'job')] : '',
      ci.workflow ? ' · ' + ci.workflow : ''),
    row('Times', run.started_at ? ['started ', dateTime(run.started_at), ' · '] : '',
      run.finished_at ? ['finished ', dateTime(run.finished_at), ' (', duration(run.started_at, run.finished_at), ') · '] : '',
      'stored ', dateTime(run.created_at), ' UTC'),
    row('Samples', String(run.sample_count ?? '–'), ' in ', String((upload.results || []).length), ' series')))));

  if (verdictRes.status === 'fulfilled') {
    root.appendChild(verdictSummary(verdictRes.value.verdict, project, runId));
  } else if (verdictRes.reason.status === 404) {
    root.appendChild(h('div', {class: 'muted', testid: 'run-no-verdict'}, isPr
      ? 'No verdict yet: `perfwarden gate` asks the server for one.'
      : 'No verdict (runs of a tracked branch are watched by the history analysis: see alerts).'));
  } else {
    root.appendChild(errorBlock(verdictRes.reason, 'Verdict'));
  }

  const results = upload.results || [];
  root.appendChild(h('h2', null, 'Results'));
  if (!results.length) {
    root.appendChild(message('empty', 'The run has no results.'));
    ctx.ready();
    return;
  }
  const sorted = [...results].sort((a, b) => a.suite.localeCompare(b.suite) || a.benchmark.localeCompare(b.benchmark, 'en', {numeric: true}) || a.metric.localeCompare(b.metric));
  root.appendChild(h('table', {class: 'data', testid: 'results-table'},
    h('thead', null, h('tr', null, ['Suite', 'Benchmark', 'Metric', 'n', 'Median', 'Min', 'Max', 'CV', '']
      .map((t, i) => h('th', {class: i >= 3 && i <= 7 ? 'num' : ''}, t)))),
    h('tbody', null, sorted.map((r) => {
      const s = summary(r.values);
      return h('tr', {testid: 'result-row'},
        h('td', {class: 'muted'}, r.suite), h('td', null, r.benchmark),
        h('td', null, r.metric, h('span', {class: 'faint'}, ' ' + (r.unit || '') + (r.direction === 'higher' ? ' ↑' : ' ↓'))),
        h('td', {class: 'num'}, String(s.n)),
        h('td', {class: 'num'}, withUnit(s.median, r.unit)),
        h('td', {class: 'num'}, withUnit(s.min, r.unit)),
        h('td', {class: 'num'}, withUnit(s.max, r.unit)),
        h('td', {class: 'num'}, s.cv === null ? '–' : (s.cv * 100).toFixed(2) + '%'),
        h('td', null, h('a', {href: route(['p', project, 'series'], {suite: r.suite, benchmark: r.benchmark,
          branch: isPr ? upload.target_branch : run.branch || undefined})}, 'history')));
    }))));
  ctx.ready();
}
