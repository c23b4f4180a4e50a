// SPDX-License-Identifier: Apache-2.0
// The verdict page of a run (#/p/{p}/runs/{id}/verdict: the link of `perfwarden gate`'s PR
// comment) and the comparison of two runs (#/p/{p}/compare?base=&contender=): one sortable
// table with a distribution plot per row. A paired verdict (measured side by side on one host)
// says how it was measured, and its UNSTABLE rows their noise and the blocks that would decide.
import {h, svg, clear, route, message, select} from './dom.js';
import {api, errorBlock, errorText, mapLimit} from './api.js';
import {withUnit, pct, pctRange, pValue, shortSha, dateTime, summary} from './format.js';

const ORDER = [
  'REGRESSION', 'INCONCLUSIVE', 'UNSTABLE', 'IMPROVEMENT', 'NEW', 'EQUIVALENT', 'PASS', 'REPORTED', 'IGNORED'];
const COUNTS = [
  'regression', 'inconclusive', 'unstable', 'improvement', 'new', 'equivalent', 'pass', 'reported', 'ignored'];
const rank = (v) => {
  const i = ORDER.indexOf(v);
  return i < 0 ? ORDER.length : i;
};
const absChange = (r) => (Number.isFinite(r.change) ? Math.abs(r.change) : -1);

const COLUMNS = [
  {key: 'dist', label: 'Distribution', sortable: false},
  {key: 'benchmark', label: 'Benchmark', value: (r) => r.benchmark},
  {key: 'metric', label: 'Metric', value: (r) => r.metric},
  {key: 'verdict', label: 'Verdict', value: (r) => rank(r.verdict) * 10 - absChange(r)},
  {key: 'base', label: 'Baseline median', num: true, value: (r) => (r.base ? r.base.median : null)},
  {key: 'current', label: 'Current median', num: true, value: (r) => (r.current ? r.current.median : null)},
  {key: 'change', label: 'Change [95% CI]', num: true, value: (r) => r.change},
  {key: 'p', label: 'Adj. p', num: true, value: (r) => r.p_adjusted},
  {key: 'reason', label: 'Reason', value: (r) => r.reason || ''},
];

// Regressions first, then INCONCLUSIVE, UNSTABLE, IMPROVEMENT, NEW, EQUIVALENT, PASS, REPORTED,
// IGNORED; the largest change first within a class.
export function defaultOrder(a, b) {
  return rank(a.verdict) - rank(b.verdict) || absChange(b) - absChange(a) ||
    (a.benchmark || '').localeCompare(b.benchmark || '') || (a.metric || '').localeCompare(b.metric || '');
}

function compareBy(column, dir) {
  return (a, b) => {
    const x = column.value(a);
    const y = column.value(b);
    const nx = x === null || x === undefined || (typeof x === 'number' && !Number.isFinite(x));
    const ny = y === null || y === undefined || (typeof y === 'number' && !Number.isFinite(y));
    if (nx || ny) return nx === ny ? defaultOrder(a, b) : nx ? 1 : -1;
    const c = typeof x === 'string' ? x.localeCompare(y, 'en', {numeric: true}) : x - y;
    return (dir === 'asc' ? c : -c) || defaultOrder(a, b);
  };
}

const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);

// How a paired verdict was measured, as `perfwarden gate` prints it: "measured side by side on this
// host against 0123456789ab: 13 blocks of 5 repetitions each (look 3 of 5), stopped: decided".
export function pairedSentence(p) {
  const design = p.design || {};
  let out = p.amends !== null && p.amends !== undefined
    ? 're-measured ' + plural(p.measured, 'row', 'rows') + ' side by side' : 'measured side by side';
  out += ' on this host against ' + String(p.baseline_commit || '(unknown commit)').slice(0, 12);
  if (p.amends !== null && p.amends !== undefined) out += ' (amending verdict #' + p.amends + ')';
  out += ': ' + plural(p.blocks, 'block', 'blocks') + ' of ' + plural(design.repetitions, 'repetition', 'repetitions') + ' each';
  if (p.looks > 0) out += ' (look ' + (p.look + 1) + ' of ' + p.looks + ')';
  out += ', stopped: ' + design.stopped;
  if (Number.isFinite(p.geomean_change)) out += '; geomean change ' + pct(p.geomean_change, 2) + ' ' + pctRange(p.geomean_ci);
  return out;
}

// A paired row's noise, and for an UNSTABLE one what would decide it.
function pairedDetail(r) {
  const d = r.paired;
  const noise = 'noise ' + (d.noise * 100).toFixed(1) + '% per block';
  if (r.verdict !== 'UNSTABLE') {
    return h('div', {class: 'attribution', testid: 'paired-detail'}, 'side by side: ' + plural(d.blocks, 'block', 'blocks') + ', ' + noise);
  }
  let text = 'UNSTABLE: ' + noise;
  if (d.blocks_needed > 0) {
    text += '; ~' + plural(d.blocks_needed, 'block', 'blocks') +
      (r.repetitions_needed > 0 ? ' (' + plural(r.repetitions_needed, 'repetition', 'repetitions') + ')' : '') + ' would decide it';
  }
  return h('div', {class: 'unstable', testid: 'unstable-detail'}, text);
}

function changeClass(row) {
  if (row.verdict === 'REGRESSION') return 'worse';
  if (row.verdict === 'IMPROVEMENT') return 'better';
  return '';
}

// A strip plot: baseline repetitions (grey, top) and current ones (bottom), medians as ticks.
export function distributionPlot(baseValues, currentValues, row) {
  const W = 150;
  const H = 30;
  const all = [...(baseValues || []), ...(currentValues || [])].filter(Number.isFinite);
  if (!all.length) return h('span', {class: 'faint'}, '–');
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  if (hi === lo) {
    lo -= Math.abs(lo) * 0.01 || 1;
    hi += Math.abs(hi) * 0.01 || 1;
  }
  const pad = (hi - lo) * 0.06;
  lo -= pad;
  hi += pad;
  const x = (v) => ((v - lo) / (hi - lo)) * W;
  const colour = row.verdict === 'REGRESSION' ? '#c62828' : row.verdict === 'IMPROVEMENT' ? '#2e7d32' : '#1f4e8c';
  const strip = (values, y, fill) => {
    if (!values || !values.length) return [];
    const s = summary(values);
    const nodes = [svg('line', {x1: x(s.q1), x2: x(s.q3), y1: y, y2: y, stroke: fill, 'stroke-width': 7, 'stroke-opacity': 0.18})];
    for (const v of values) nodes.push(svg('circle', {cx: x(v).toFixed(1), cy: y, r: 1.8, fill, 'fill-opacity': 0.55}));
    nodes.push(svg('line', {x1: x(s.median), x2: x(s.median), y1: y - 6, y2: y + 6, stroke: fill, 'stroke-width': 2}));
    return nodes;
  };
  const unit = row.unit;
  const title = 'baseline: ' + (baseValues ? baseValues.length + ' repetitions' : 'none') + '; current: ' +
    (currentValues ? currentValues.length + ' repetitions' : 'none') + '; axis ' + withUnit(lo + pad, unit) + ' – ' + withUnit(hi - pad, unit);
  return svg('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'dist', 'data-testid': 'distribution',
    role: 'img', 'aria-label': title},
  svg('title', null, title),
  svg('line', {x1: 0, x2: W, y1: H / 2, y2: H / 2, stroke: '#eef0f3'}),
  strip(baseValues, 8, '#6b7280'), strip(currentValues, 22, colour));
}

// The verdict table. rows: the verdict's results (or compare's benchmarks mapped to them).
// Returns {element, setSamples(lookup)} where lookup(row) -> {base, current} value arrays.
export function verdictTable(rows) {
  let sortKey = null;
  let sortDir = 'desc';
  let lookup = null;
  const tbody = h('tbody');
  const headCells = COLUMNS.map((c) => {
    const th = h('th', {class: (c.num ? 'num ' : '') + (c.sortable === false ? '' : 'sortable'), dataset: {key: c.key},
      title: c.key === 'dist' ? 'every repetition: baseline (grey, top) and current (bottom); bar = q1–q3, tick = median' : 'sort'},
    c.label, c.key === 'dist' ? h('div', {class: 'faint', style: {fontWeight: 'normal', fontSize: '11px'}}, 'grey: baseline · colour: current') : null);
    if (c.sortable !== false) {
      th.addEventListener('click', () => {
        if (sortKey === c.key) sortDir = sortDir === 'asc' ? 'desc' : 'asc';
        else {
          sortKey = c.key;
          sortDir = c.num || c.key === 'verdict' ? (c.key === 'verdict' ? 'asc' : 'desc') : 'asc';
        }
        draw();
      });
    }
    return th;
  });
  const table = h('table', {class: 'data', testid: 'verdict-table'}, h('thead', null, h('tr', null, headCells)), tbody);

  function draw() {
    const sorted = [...rows];
    const column = COLUMNS.find((c) => c.key === sortKey);
    sorted.sort(column ? compareBy(column, sortDir) : defaultOrder);
    headCells.forEach((th) => {
      th.classList.toggle('sorted-asc', th.dataset.key === sortKey && sortDir === 'asc');
      th.classList.toggle('sorted-desc', th.dataset.key === sortKey && sortDir === 'desc');
    });
    clear(tbody);
    for (const r of sorted) tbody.appendChild(rowElement(r));
  }

  function rowElement(r) {
    const samples = lookup ? lookup(r) : null;
    const extra = [];
    if (r.attribution) {
      const a = r.attribution;
      const moved = (a.moved || []).map((m) => m.metric + ' ' + pct(m.change) + (m.verdict ? ' (' + m.verdict.toLowerCase() + ')' : '')).join(', ');
      if (moved) extra.push(h('div', {class: 'attribution'}, 'moved: ' + moved));
      if (a.roofline) extra.push(h('div', {class: 'attribution'}, 'roofline: ' + a.roofline.class + ' (intensity ' + a.roofline.intensity + ', ridge ' + a.roofline.ridge + ')'));
      if (a.hint) extra.push(h('div', {class: 'attribution'}, 'hint: ' + a.hint));
    }
    if (r.environment) extra.push(h('div', {class: 'environment'}, 'environment: ' + r.environment));
    if (r.paired) extra.push(pairedDetail(r));
    return h('tr', {testid: 'verdict-row', dataset: {benchmark: r.benchmark, metric: r.metric || '', verdict: r.verdict}},
      h('td', {class: 'dist-cell'}, samples ? distributionPlot(samples.base, samples.current, r) : h('span', {class: 'faint'}, '…')),
      h('td', null, h('div', null, r.benchmark), r.suite ? h('div', {class: 'faint'}, r.suite) : null),
      h('td', null, r.metric || '', r.unit ? h('span', {class: 'faint'}, ' ' + r.unit) : null),
      h('td', null, h('span', {class: 'badge v-' + r.verdict, testid: 'verdict'}, r.verdict)),
      h('td', {class: 'num'}, r.base ? withUnit(r.base.median, r.unit) : '–', r.base ? h('div', {class: 'faint'}, 'n ' + r.base.n + (r.base.cv !== null && r.base.cv !== undefined ? ', cv ' + (r.base.cv * 100).toFixed(1) + '%' : '')) : null),
      h('td', {class: 'num'}, r.current ? withUnit(r.current.median, r.unit) : '–', r.current ? h('div', {class: 'faint'}, 'n ' + r.current.n + (r.current.cv !== null && r.current.cv !== undefined ? ', cv ' + (r.current.cv * 100).toFixed(1) + '%' : '')) : null),
      h('td', {class: 'num ' + changeClass(r), testid: 'change'}, pct(r.change), h('div', {class: 'faint'}, pctRange(r.change_ci))),
      h('td', {class: 'num'}, pValue(r.p_adjusted)),
      h('td', {class: 'reason'}, r.reason || '', extra));
  }

  draw();
  return {
    element: table,
    setSamples(fn) {
      lookup = fn;
      draw();
    },
  };
}

// Samples of uploads: key (suite \x1f benchmark \x1f metric) -> values, pooled over uploads.
function sampleIndex(uploads) {
  const map = new Map();
  for (const u of uploads) {
    for (const r of (u && u.results) || []) {
      const key = r.suite + '\x1f' + r.benchmark + '\x1f' + r.metric;
      const list = map.get(key) || [];
      for (const v of r.values) list.push(v);
      map.set(key, list);
    }
  }
  return map;
}

async function fetchUploads(project, ids) {
  const runs = await mapLimit(ids, 4, (id) => api.run(project, id).catch(() => null));
  return runs.filter(Boolean).map((r) => r.upload);
}

function banner(v, project) {
  const c = v.counts || {};
  const b = v.baseline;
  return h('div', {class: 'banner o-' + v.outcome, testid: 'verdict-banner', dataset: {outcome: v.outcome}},
    h('span', {class: 'outcome'}, v.outcome.replace('_', ' ').toUpperCase()),
    h('span', {class: 'counts'}, COUNTS.filter((k) => c[k] || (k === 'unstable' || k === 'pass' ? v.paired : k !== 'reported'))
      .map((k) => h('span', {dataset: {count: k}}, h('b', null, String(c[k] ?? 0)), ' ' + k))),
    b ? h('span', null, 'baseline ', h('span', {class: 'mono'}, shortSha(b.commit)), ' on ', b.branch, ' (', b.selection,
      b.distance ? ', ' + b.distance + ' commits back' : '', '; ', b.run_ids.length, ' run', b.run_ids.length === 1 ? '' : 's', ')',
    b.run_ids[0] ? [' · ', h('a', {href: route(['p', project, 'compare'], {base: b.run_ids[b.run_ids.length - 1], contender: v.run_id})}, 'compare runs')] : null)
      : v.paired ? h('span', null, 'baseline ', h('span', {class: 'mono'}, shortSha(v.paired.baseline_commit)), ' (side by side)')
        : h('span', null, 'no baseline'));
}

export async function renderVerdictPage(ctx) {
  const {root, project} = ctx;
  const runId = ctx.segments[3];
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, 'Verdict'),
    h('a', {href: route(['p', project, 'runs', runId]), class: 'mono'}, 'run ' + runId)));
  let v;
  try {
    v = (await api.verdict(project, runId)).verdict;
  } catch (err) {
    if (!ctx.alive()) return;
    if (err.status === 404) {
      root.appendChild(message('empty', 'This run has no verdict yet (or no such run). `perfwarden gate` computes one ' +
        '(POST /api/v1/projects/' + project + '/runs/' + runId + '/verdict, ingest scope).'));
      ctx.ready();
      return;
    }
    root.appendChild(errorBlock(err, 'Cannot read the verdict'));
    ctx.fail(errorText(err));
    return;
  }
  if (!ctx.alive()) return;
  root.appendChild(h('div', {class: 'muted'}, 'commit ', h('span', {class: 'mono'}, v.commit), ' · branch ', v.branch || '–',
    ' · testbed ', v.testbed || '–', v.pr ? ' · PR #' + v.pr : '', ' · computed ', dateTime(v.created_at), ' UTC · ', v.algorithm_version || ''));
  root.appendChild(banner(v, project));
  if (v.paired) root.appendChild(h('div', {class: 'msg msg-info', testid: 'verdict-paired'}, pairedSentence(v.paired)));
  if ((v.results || []).some((r) => r.verdict === 'UNSTABLE')) {
    root.appendChild(h('div', {class: 'msg msg-unstable', testid: 'unstable-advice'}, 'UNSTABLE results do not fail the job: to ' +
      'decide them, raise the repetitions per block or max_blocks, quiet the benchmark, or give it its own threshold rule.'));
  }
  for (const w of v.warnings || []) root.appendChild(h('div', {class: 'msg msg-warning', testid: 'verdict-warning'}, w));
  const rows = v.results || [];
  if (!rows.length) {
    root.appendChild(message('empty', 'The verdict has no results.'));
    ctx.ready();
    return;
  }
  const table = verdictTable(rows);
  root.appendChild(table.element);
  const params = v.parameters || {};
  root.appendChild(h('div', {class: 'muted', style: {marginTop: '8px'}}, 'threshold ', pct(params.threshold).replace('+', ''),
    ' · alpha ', String(params.alpha ?? '–'), ' · test ', params.test || '–', ' · correction ', params.correction || '–',
    ' · click a column header to sort'));
  const [current, base] = await Promise.all([
    fetchUploads(project, v.contender_run_ids || [runId]),
    fetchUploads(project, v.baseline ? v.baseline.run_ids : []),
  ]);
  if (!ctx.alive()) return;
  const ci = sampleIndex(current);
  const bi = sampleIndex(base);
  table.setSamples((r) => {
    const key = r.suite + '\x1f' + r.benchmark + '\x1f' + r.metric;
    return {base: bi.get(key) || null, current: ci.get(key) || null};
  });
  ctx.ready();
}

export async function renderComparePage(ctx) {
  const {root, project, query} = ctx;
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, 'Compare two runs')));
  const baseInput = h('input', {type: 'text', size: 38, value: query.base || '', placeholder: 'base run id', testid: 'compare-base'});
  const contInput = h('input', {type: 'text', size: 38, value: query.contender || '', placeholder: 'contender run id', testid: 'compare-contender'});
  const form = h('form', {class: 'toolbar', onsubmit: (e) => {
    e.preventDefault();
    ctx.setQuery({base: baseInput.value.trim(), contender: contInput.value.trim(), metric: query.metric, threshold: query.threshold});
  }}, h('label', null, 'Base', baseInput), h('label', null, 'Contender', contInput), h('button', {type: 'submit', class: 'primary'}, 'Compare'));
  root.appendChild(form);
  if (!query.base || !query.contender) {
    root.appendChild(message('info', 'Give two run ids (from the ', h('a', {href: route(['p', project, 'runs'])}, 'runs list'), ').'));
    ctx.ready();
    return;
  }
  const metric = query.metric || 'real_time';
  const [cmpRes, baseRes, contRes] = await Promise.allSettled([
    api.compare(project, {base: query.base, contender: query.contender, metric, threshold: query.threshold}),
    api.run(project, query.base), api.run(project, query.contender)]);
  if (!ctx.alive()) return;
  const metrics = new Set([metric]);
  for (const r of [baseRes, contRes]) {
    if (r.status === 'fulfilled') for (const s of r.value.upload.results || []) metrics.add(s.metric);
  }
  form.appendChild(h('label', null, 'Metric', select({testid: 'compare-metric',
    onchange: (e) => ctx.setQuery({base: query.base, contender: query.contender, metric: e.target.value, threshold: query.threshold})},
  [...metrics].sort(), metric)));
  if (cmpRes.status === 'rejected') {
    root.appendChild(errorBlock(cmpRes.reason, 'Cannot compare'));
    ctx.fail(errorText(cmpRes.reason));
    return;
  }
  const c = cmpRes.value;
  const describe = (r, label) => (r.status === 'fulfilled'
    ? h('div', null, label + ': ', h('a', {href: route(['p', project, 'runs', r.value.run.id]), class: 'mono'}, shortSha(r.value.run.id)),
      ' · ', r.value.run.branch || '–', ' @ ', h('span', {class: 'mono'}, shortSha(r.value.run.commit)), ' · ', r.value.run.testbed)
    : null);
  root.appendChild(h('div', {class: 'panel'}, describe(baseRes, 'base'), describe(contRes, 'contender'),
    h('div', {class: 'muted'}, c.metric + ' (' + (c.unit || 'no unit') + ', ' + c.direction + ' is better) · threshold ' +
      pct(c.threshold).replace('+', '') + ' · alpha ' + c.alpha + ' · ' + (c.test || '') +
      (c.suite && c.suite.geomean_ratio ? ' · geomean ratio ' + c.suite.geomean_ratio.toFixed(4) + ' ' + pctRange((c.suite.ci || []).map((x) => x - 1)) : ''))));
  for (const w of c.warnings || []) root.appendChild(h('div', {class: 'msg msg-warning'}, w));
  if (c.only_in_base && c.only_in_base.length) root.appendChild(h('div', {class: 'muted'}, 'only in base: ' + c.only_in_base.join(', ')));
  if (c.only_in_contender && c.only_in_contender.length) root.appendChild(h('div', {class: 'muted'}, 'only in contender: ' + c.only_in_contender.join(', ')));
  const rows = (c.benchmarks || []).map((b) => ({
    benchmark: b.name, metric: c.metric, unit: c.unit, direction: c.direction, verdict: b.verdict,
    base: b.base, current: b.contender, change: b.change, change_ci: b.change_ci, p_adjusted: b.p_adjusted, reason: b.reason,
  }));
  if (!rows.length) {
    root.appendChild(message('empty', 'No benchmark of metric ' + metric + ' is in both runs.'));
    ctx.ready();
    return;
  }
  const table = verdictTable(rows);
  root.appendChild(table.element);
  const values = (r, name) => {
    if (r.status !== 'fulfilled') return null;
    let out = null;
    for (const s of r.value.upload.results || []) {
      if (s.metric !== metric) continue;
      if (s.benchmark === name || s.suite + '/' + s.benchmark === name) out = (out || []).concat(s.values);
    }
    return out;
  };
  table.setSamples((r) => ({base: values(baseRes, r.benchmark), current: values(contRes, r.benchmark)}));
  ctx.ready();
}
