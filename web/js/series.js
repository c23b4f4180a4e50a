// SPDX-License-Identifier: Apache-2.0
// The series page (#/p/{project}/series?suite=&benchmark=&metric=&branch=&testbed=&telemetry=):
// one chart per metric, stacked, with shared cursor and x zoom; alerts and change points on them.
import {h, clear, route, message, select} from './dom.js';
import {api, errorBlock, errorText, mapLimit} from './api.js';
import {dateTime, commitUrl, withUnit} from './format.js';
import {buildChartData, createChart, ChartGroup} from './chart.js';

const isGpu = (name) => name.startsWith('gpu_');
const list = (text) => (text ? text.split(',').map((s) => s.trim()).filter(Boolean) : null);

// The commits of all charts on one x axis: in the order their first run was stored (the order
// of the API's points), merged across metrics.
function unionCommits(seriesList) {
  const bySha = new Map();
  for (const s of seriesList) {
    for (const p of s.points || []) {
      if (!bySha.has(p.commit)) {
        bySha.set(p.commit, {sha: p.commit, subject: p.subject, author: p.author,
          author_time: p.author_time, time: p.time, runs: p.runs || [], order: bySha.size});
      }
    }
  }
  const commits = [...bySha.values()];
  commits.sort((a, b) => (a.time || '').localeCompare(b.time || '') || a.order - b.order);
  const index = new Map(commits.map((c, i) => [c.sha, i]));
  return {commits, index};
}

function metricPicker(label, metrics, selected, onChange, testid) {
  return h('div', {class: 'metric-picks', testid},
    h('span', {class: 'muted'}, label),
    metrics.map((m) => h('label', null,
      h('input', {type: 'checkbox', checked: selected.includes(m.name), dataset: {metric: m.name},
        onchange: (e) => onChange(m.name, e.target.checked)}),
      m.name, m.unit ? h('span', {class: 'faint'}, ' ' + m.unit) : null)));
}

export async function renderSeries(ctx) {
  const {root, project, query} = ctx;
  const benchmark = query.benchmark;
  if (!benchmark) {
    root.appendChild(message('error', 'No benchmark given. ', h('a', {href: route(['p', project])}, 'Pick one')));
    ctx.fail('no benchmark given');
    return;
  }
  const head = h('div', {class: 'page-head'},
    h('h1', {testid: 'series-title'}, benchmark),
    h('span', {class: 'sub'}, query.suite ? 'suite ' + query.suite : ''));
  root.appendChild(head);

  // When the address names the branch and metrics (links from the benchmark browser, alerts
  // and verdicts do), the series and their alerts load together with the lists instead of after
  // them: on a 10,000-commit series that is most of the page's wait.
  const early = new Map();
  const fetchEarly = (key, start) => {
    if (!early.has(key)) {
      const promise = start();
      promise.catch(() => {});  // awaited later, or dropped when the lists change the question
      early.set(key, promise);
    }
    return early.get(key);
  };
  const seriesParams = (bench, metric, suiteName, branchName, testbedName) => ({benchmark: bench,
    suite: suiteName || undefined, metric, branch: branchName, testbed: testbedName || undefined, raw: 1, limit: 10000});
  const alertParams = (bench, branchName, testbedName) => ({state: 'all', benchmark: bench, branch: branchName,
    testbed: testbedName || undefined, limit: 500});
  const loadSeries = (params) => fetchEarly('series ' + JSON.stringify(params), () => api.series(project, params));
  const loadAlerts = (params) => fetchEarly('alerts ' + JSON.stringify(params), () => api.alerts(project, params));
  if (query.branch && query.metric) {
    for (const name of list(query.metric)) {
      loadSeries(seriesParams(benchmark, name, query.suite, query.branch, query.testbed));
    }
    loadAlerts(alertParams(benchmark, query.branch, query.testbed));
  }

  const [benchRes, branchRes, testbedRes] = await Promise.allSettled([
    api.benchmarks(project), api.branches(project), api.testbeds(project)]);
  if (!ctx.alive()) return;
  if (benchRes.status === 'rejected') {
    root.appendChild(errorBlock(benchRes.reason, 'Cannot read the benchmarks'));
    ctx.fail(errorText(benchRes.reason));
    return;
  }
  const benchmarks = benchRes.value.benchmarks || [];
  const entry = benchmarks.find((b) => b.name === benchmark && (!query.suite || b.suite === query.suite));
  const suite = query.suite || (entry && entry.suite) || '';
  // The suite the series requests name: none when the benchmark's name is unique (as the early
  // requests above, which could not know), else the one the address or the list gives.
  const ownSuite = query.suite || (benchmarks.filter((b) => b.name === benchmark).length > 1 ? suite : '');
  let available = entry && Array.isArray(entry.metrics) ? entry.metrics : null;
  const notes = [];
  if (!available) {
    // An older server without per-benchmark metrics: offer the project's.
    try {
      available = (await api.metrics(project)).metrics || [];
    } catch {
      available = [{name: 'real_time', unit: 'ns', direction: 'lower'}];
    }
    notes.push('This server does not list the metrics of each benchmark; all metrics of the project are offered.');
  }
  // real_time and cpu_time first, as Google Benchmark prints them; then the others.
  const PRIORITY = ['real_time', 'cpu_time'];
  const prio = (m) => (PRIORITY.includes(m.name) ? PRIORITY.indexOf(m.name) : PRIORITY.length);
  available = available.map((m, i) => ({m, i})).sort((a, b) => prio(a.m) - prio(b.m) || a.i - b.i).map((x) => x.m);
  const telemetryEntry = benchmark !== suite && benchmarks.find((b) => b.name === suite && b.suite === suite);
  const telemetry = telemetryEntry && Array.isArray(telemetryEntry.metrics) ? telemetryEntry.metrics.filter((m) => isGpu(m.name)) : [];

  const branches = branchRes.status === 'fulfilled' ? (branchRes.value.branches || []).map((b) => b.name) : [];
  const testbeds = testbedRes.status === 'fulfilled' ? (testbedRes.value.testbeds || []).map((t) => t.name) : [];
  const branch = query.branch || (branches.includes('main') ? 'main' : branches[0] || 'main');
  const testbed = query.testbed || '';
  const ownDefault = available.filter((m) => benchmark === suite || !isGpu(m.name)).map((m) => m.name);
  const selected = list(query.metric) || (ownDefault.length ? ownDefault : available.map((m) => m.name));
  const selectedTelemetry = list(query.telemetry) || [];

  // Toolbar: branch, testbed, metrics, telemetry, zoom controls.
  const setQuery = (changes) => ctx.setQuery({suite, benchmark, branch, testbed, metric: query.metric,
    telemetry: query.telemetry, ...changes});
  const branchOptions = branches.length ? branches : [branch];
  if (!branchOptions.includes(branch)) branchOptions.unshift(branch);
  const testbedOptions = [{value: '', label: 'all testbeds'}, ...testbeds];
  if (testbed && !testbeds.includes(testbed)) testbedOptions.push(testbed);
  const group = {current: null};
  const panButton = h('button', {type: 'button', testid: 'pan-mode', title: 'Drag pans instead of zooming (or hold Shift)',
    onclick: () => {
      if (!group.current) return;
      group.current.panMode = !group.current.panMode;
      panButton.classList.toggle('active', group.current.panMode);
      root.querySelectorAll('.chart-plot').forEach((el) => el.classList.toggle('pan-mode', group.current.panMode));
    }}, 'Pan mode');
  root.appendChild(h('div', {class: 'toolbar'},
    h('label', null, 'Branch', select({testid: 'branch-select', onchange: (e) => setQuery({branch: e.target.value})}, branchOptions, branch)),
    h('label', null, 'Testbed', select({testid: 'testbed-select', onchange: (e) => setQuery({testbed: e.target.value})}, testbedOptions, testbed)),
    panButton,
    h('button', {type: 'button', testid: 'reset-zoom', onclick: () => group.current && group.current.resetZoom()}, 'Reset zoom'),
    h('span', {class: 'muted'}, 'drag: zoom · wheel: zoom · shift+drag: pan · double-click: reset')));
  const toggle = (current, key) => (name, on) => {
    const next = on ? [...new Set([...current, name])] : current.filter((m) => m !== name);
    setQuery({[key]: next.join(',')});
  };
  root.appendChild(h('div', {class: 'toolbar'},
    metricPicker('Metrics', available, selected, toggle(selected, 'metric'), 'metric-picker'),
    telemetry.length ? metricPicker('GPU telemetry (' + suite + ')', telemetry, selectedTelemetry, toggle(selectedTelemetry, 'telemetry'), 'telemetry-picker') : null));
  for (const note of notes) root.appendChild(message('info', note));
  if (branchRes.status === 'rejected') root.appendChild(message('info', 'Branches unavailable (' + errorText(branchRes.reason) + ').'));

  const detail = h('div', {class: 'panel point-detail', testid: 'point-detail'},
    h('span', {class: 'muted'}, 'Hover a chart for a commit\'s details; click to pin them.'));
  root.appendChild(h('div', {class: 'toolbar'},
    h('span', {class: 'legend-key'}, h('i', {style: {background: 'rgba(31,78,140,0.45)', height: '4px', width: '4px'}}), 'repetitions'),
    h('span', {class: 'legend-key'}, h('i', {style: {background: '#1f4e8c', height: '2px'}}), 'median'),
    h('span', {class: 'legend-key'}, h('i', {style: {background: 'rgba(31,78,140,0.18)'}}), 'q1–q3'),
    h('span', {class: 'legend-key'}, h('i', {style: {background: '#c62828', width: '2px'}}), 'alert (regression)'),
    h('span', {class: 'legend-key'}, h('i', {style: {background: '#2e7d32', width: '2px'}}), 'alert (improvement)'),
    h('span', {class: 'legend-key'}, h('i', {style: {borderLeft: '2px dashed #7b4fb0', width: '2px', height: '12px'}}), 'change point')));
  root.appendChild(detail);
  const chartsBox = h('div', {class: 'charts', testid: 'series-charts'});
  root.appendChild(chartsBox);

  // The series: own metrics, then telemetry (benchmark = suite name).
  const wanted = [
    ...selected.map((name) => ({name, bench: benchmark, meta: available.find((m) => m.name === name)})),
    ...selectedTelemetry.map((name) => ({name, bench: suite, meta: telemetry.find((m) => m.name === name)})),
  ];
  if (!wanted.length) {
    chartsBox.appendChild(message('empty', 'No metric selected.'));
    ctx.ready();
    return;
  }
  const loaded = await mapLimit(wanted, 4, async (w) => {
    try {
      const s = await loadSeries(seriesParams(w.bench, w.name, w.bench === benchmark ? ownSuite : suite, branch, testbed));
      return {...w, series: s};
    } catch (err) {
      return {...w, error: err};
    }
  });
  if (!ctx.alive()) return;
  const failed = loaded.filter((l) => l.error);
  const good = loaded.filter((l) => l.series && (l.series.points || []).length);
  for (const f of failed) {
    if (f.error.status === 404) continue;
    chartsBox.appendChild(errorBlock(f.error, 'Series ' + f.name));
  }
  if (!good.length) {
    if (failed.some((f) => f.error.status !== 404)) {
      ctx.fail(errorText(failed[0].error));
    } else {
      chartsBox.appendChild(message('empty', 'No results for ' + benchmark + ' on branch ' + branch +
        (testbed ? ' and testbed ' + testbed : '') + '.'));
      ctx.ready();
    }
    return;
  }

  // Alerts of this benchmark on this branch (all states), to mark.
  let alerts = [];
  try {
    const res = await loadAlerts(alertParams(benchmark, branch, testbed));
    alerts = res.alerts || [];
    if (selectedTelemetry.length) {
      const res2 = await loadAlerts(alertParams(suite, branch, testbed));
      alerts = alerts.concat(res2.alerts || []);
    }
  } catch (err) {
    chartsBox.appendChild(errorBlock(err, 'Alerts'));
  }
  if (!ctx.alive()) return;

  const {commits, index} = unionCommits(good.map((g) => g.series));
  const g = new ChartGroup(commits);
  group.current = g;
  ctx.onCleanup(() => g.destroy());
  let pinned = null;
  let repoCi = null;
  const showDetail = (i, pin) => {
    if (i === null) {
      if (pinned === null) clear(detail).appendChild(h('span', {class: 'muted'}, 'Hover a chart for a commit\'s details; click to pin them.'));
      return;
    }
    const c = commits[i];
    const url = commitUrl(repoCi, c.sha);
    clear(detail).append(
      pin ? h('span', {class: 'pinned'}, 'pinned · ') : '',
      url ? h('a', {href: url, class: 'mono', target: '_blank', rel: 'noopener noreferrer', testid: 'commit-link'}, c.sha)
        : h('span', {class: 'mono', testid: 'commit-sha'}, c.sha),
      ' · #' + i + ' · ', dateTime(c.author_time || c.time), c.author ? ' · ' + c.author : '',
      h('div', null, h('b', null, c.subject || '(no subject)')),
      h('div', null, 'Runs: ', c.runs.slice(0, 6).map((id, k) => [k ? ', ' : '',
        h('a', {href: route(['p', project, 'runs', id]), testid: 'run-link', class: 'mono'}, id.slice(0, 8))]),
      c.runs.length > 6 ? ' …' : '',
      ' · ', good.map((s) => {
        const p = (s.series.points || []).find((pt) => pt.commit === c.sha);
        return p ? s.name + ' ' + withUnit(p.median, s.series.unit) + '  ' : '';
      })));
  };
  g.onHover = (i) => {
    if (pinned === null) showDetail(i, false);
  };
  g.onPick = (i) => {
    pinned = pinned === i ? null : i;
    showDetail(pinned ?? i, pinned !== null);
  };

  const width = Math.max(400, chartsBox.clientWidth - 18);
  const height = good.length <= 2 ? 300 : good.length <= 4 ? 240 : 190;
  const charts = [];
  for (const s of good) {
    const data = buildChartData(s.series.points, index, commits.length);
    const readout = h('span', {class: 'readout'});
    const cpNote = h('span', {class: 'cp-note'});
    const plot = h('div', {class: 'chart-plot'});
    const seriesLink = s.bench !== benchmark ? ' (' + s.bench + ')' : '';
    const box = h('div', {class: 'chart-box', testid: 'series-chart',
      dataset: {metric: s.name, points: String(data.count), commits: String(commits.length)}},
    h('div', {class: 'chart-head'},
      h('span', {class: 'metric'}, s.name + seriesLink),
      h('span', {class: 'muted'}, (s.series.unit || 'no unit') + ' · ' + (s.series.direction === 'higher' ? 'higher is better' : 'lower is better') +
        ' · ' + s.series.points.length + ' commits · ' + data.count + ' repetitions'),
      readout, cpNote),
    plot);
    chartsBox.appendChild(box);
    const mine = alerts.filter((a) => a.series && a.series.metric === s.name && a.series.benchmark === s.bench)
      .map((a) => ({x: index.get(a.range && a.range.first_bad && a.range.first_bad.sha), alert: a}))
      .filter((m) => m.x !== undefined);
    const chart = createChart(g, plot, {metric: s.name, unit: s.series.unit, direction: s.series.direction,
      data, alerts: mine, readout, width, height,
      onAlert: (a) => { window.location.hash = route(['p', project, 'alerts'], {state: 'all', alert: a.id}); }});
    charts.push({s, chart, cpNote});
  }
  g.resetZoom();
  const onResize = () => g.resize(Math.max(400, chartsBox.clientWidth - 18));
  window.addEventListener('resize', onResize);
  ctx.onCleanup(() => window.removeEventListener('resize', onResize));

  // The page is ready with its charts, repetitions and alerts drawn. Change points follow (the
  // server computes them on demand, over the whole series) and the repository URL of the newest
  // run (for commit links); the charts' box says `data-change-points="done"` when they are in.
  const newestRun = commits.length && commits[commits.length - 1].runs[0];
  ctx.ready();
  await Promise.all([
    mapLimit(charts, 3, async ({s, chart, cpNote}) => {
      // The detector runs on one testbed's series: with several, the user picks one.
      const cpTestbed = testbed || (testbeds.length === 1 ? testbeds[0] : undefined);
      if (!cpTestbed && testbeds.length > 1) {
        cpNote.textContent = 'change points: pick a testbed';
        return;
      }
      try {
        const cp = await api.changePoints(project, {benchmark: s.bench, metric: s.name, branch,
          suite: suite || undefined, testbed: cpTestbed});
        const xs = (cp.change_points || []).map((p) => index.get(p.first_bad && p.first_bad.sha)).filter((x) => x !== undefined);
        chart.setChangePoints(xs);
        cpNote.textContent = xs.length + ' change point' + (xs.length === 1 ? '' : 's');
        cpNote.dataset.testid = 'change-points';
        cpNote.dataset.count = String(xs.length);
      } catch (err) {
        cpNote.textContent = 'change points: ' + (err.status === 400 ? err.message : errorText(err));
      }
    }),
    newestRun ? api.run(project, newestRun).then((r) => { repoCi = r.upload && r.upload.ci; }, () => {}) : null,
  ]);
  if (!ctx.alive()) return;
  chartsBox.dataset.changePoints = 'done';
}
