// SPDX-License-Identifier: Apache-2.0
// One metric's history as a uPlot chart: every repetition as a point (drawn straight onto the
// canvas from typed arrays, no per-point objects), the per-commit median as a line, the
// interquartile band, alert markers and change points; x = commit index 0..N-1.
// Interaction: drag = zoom x, wheel = zoom around the cursor, shift+drag (or pan mode) = pan,
// double-click = reset; the charts of one page share cursor and x range (ChartGroup).
/* global uPlot */
import {h} from './dom.js';
import {withUnit, shortSha, dateOnly, dateTime} from './format.js';
import {drawRepetitions, drawChangePoints} from './layers.js';

const COLOR = '#1f4e8c';
const Y_AXIS_SIZE = 86;

// The arrays of one chart, built once from the API's points aligned on the shared commits.
// commitIndex: Map sha -> x. Returns {median, q1, q3, lo, hi, offsets, values, count}.
export function buildChartData(points, commitIndex, n) {
  const median = new Array(n).fill(null);
  const q1 = new Array(n).fill(null);
  const q3 = new Array(n).fill(null);
  const lo = new Array(n).fill(null);
  const hi = new Array(n).fill(null);
  const perCommit = new Array(n).fill(null);
  let total = 0;
  for (const p of points) {
    const x = commitIndex.get(p.commit);
    if (x === undefined) continue;
    const values = Array.isArray(p.values) ? p.values : null;
    perCommit[x] = {point: p, values};
    total += values ? values.length : 0;
    median[x] = p.median;
    let a = p.q1;
    let b = p.q3;
    if ((a === undefined || b === undefined) && values && values.length) {
      const sorted = Float64Array.from(values).sort();
      const q = (f) => {
        const pos = (sorted.length - 1) * f;
        const i = Math.floor(pos);
        const j = Math.min(sorted.length - 1, i + 1);
        return sorted[i] + (sorted[j] - sorted[i]) * (pos - i);
      };
      a = q(0.25);
      b = q(0.75);
    }
    q1[x] = a ?? p.median;
    q3[x] = b ?? p.median;
    lo[x] = p.min ?? p.median;
    hi[x] = p.max ?? p.median;
  }
  // Every repetition in one Float64Array; offsets[x]..offsets[x+1] are commit x's.
  const offsets = new Int32Array(n + 1);
  const values = new Float64Array(total);
  let k = 0;
  for (let x = 0; x < n; x++) {
    offsets[x] = k;
    const c = perCommit[x];
    if (c && c.values) for (const v of c.values) values[k++] = v;
  }
  offsets[n] = k;
  return {median, q1, q3, lo, hi, offsets, values, count: total, perCommit};
}

// Charts that share cursor and x range.
export class ChartGroup {
  constructor(commits) {
    this.commits = commits;
    this.charts = [];
    this.syncKey = 'pg-' + Math.random().toString(36).slice(2);
    this.syncing = false;
    this.panMode = false;
    this.onHover = null; // (index|null) for the page's detail panel
    this.onPick = null; // (index) on a click
  }

  setX(min, max, except) {
    if (this.syncing) return;
    this.syncing = true;
    try {
      for (const c of this.charts) {
        if (c.u === except) continue;
        const s = c.u.scales.x;
        if (s.min !== min || s.max !== max) c.u.setScale('x', {min, max});
      }
    } finally {
      this.syncing = false;
    }
  }

  resetZoom() {
    const n = this.commits.length;
    this.setX(-0.5, Math.max(n - 0.5, 0.5), null);
  }

  resize(width) {
    for (const c of this.charts) c.u.setSize({width, height: c.height});
  }

  destroy() {
    for (const c of this.charts) c.u.destroy();
    this.charts = [];
  }
}

function xAxisLabel(commits, v) {
  if (!Number.isInteger(v) || v < 0 || v >= commits.length) return '';
  const c = commits[v];
  return shortSha(c.sha).slice(0, 7) + '\n' + dateOnly(c.author_time || c.time).slice(5);
}

// Creates one chart in `target`. spec: {metric, unit, direction, data (buildChartData),
// alerts: [{x, alert}], onAlert(alert), height, width}. Returns {u, height, setChangePoints,
// element}.
export function createChart(group, target, spec) {
  const commits = group.commits;
  const n = commits.length;
  const xs = Float64Array.from({length: n}, (_, i) => i);
  const {data} = spec;
  const chart = {height: spec.height, changePoints: [], markers: [], hovered: false};
  const readout = spec.readout;
  const tooltip = h('div', {class: 'tooltip', hidden: true});

  const opts = {
    width: spec.width,
    height: spec.height,
    legend: {show: false},
    cursor: {
      y: false,
      points: {show: false},
      drag: {x: true, y: false, setScale: false},
      sync: {key: group.syncKey, setSeries: false, scales: ['x', null]},
    },
    scales: {
      x: {time: false},
      y: {
        range: (u, min, max) => {
          if (min === null || max === null) return [0, 1];
          const span = max - min || Math.abs(max) * 0.05 || 1;
          return [min - span * 0.06, max + span * 0.06];
        },
      },
    },
    axes: [
      {
        values: (u, splits) => splits.map((v) => xAxisLabel(commits, v)),
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000],
        space: 64,
        size: 40,
        font: '11px system-ui, sans-serif',
        grid: {stroke: '#eef0f3'},
        ticks: {stroke: '#dde1e7', size: 4},
      },
      {
        values: (u, splits) => splits.map((v) => withUnit(v, spec.unit, 3)),
        size: Y_AXIS_SIZE,
        font: '11px system-ui, sans-serif',
        grid: {stroke: '#eef0f3'},
        ticks: {stroke: '#dde1e7', size: 4},
      },
    ],
    series: [
      {label: 'commit'},
      {label: 'q3', paths: () => null, points: {show: false}},
      {label: 'q1', paths: () => null, points: {show: false}},
      {label: 'median', stroke: COLOR, width: 1.75, spanGaps: true, points: {show: false}},
      {label: 'min', paths: () => null, points: {show: false}},
      {label: 'max', paths: () => null, points: {show: false}},
    ],
    hooks: {
      drawAxes: [(u) => drawRepetitions(u, data)],
      draw: [(u) => {
        drawChangePoints(u, chart.changePoints);
        placeMarkers(u);
      }],
      setScale: [(u, key) => {
        if (key !== 'x') return;
        // The visible range, for tests and benchmarks.
        target.dataset.xMin = String(u.scales.x.min);
        target.dataset.xMax = String(u.scales.x.max);
        group.setX(u.scales.x.min, u.scales.x.max, u);
      }],
      setSelect: [(u) => {
        // Drag to zoom: our own so that the whole group follows once.
        if (u.select.width > 2) {
          const min = u.posToVal(u.select.left, 'x');
          const max = u.posToVal(u.select.left + u.select.width, 'x');
          u.setSelect({left: 0, top: 0, width: 0, height: 0}, false);
          if (max - min >= 1) u.setScale('x', {min, max});
        }
      }],
      setCursor: [(u) => updateHover(u)],
    },
  };

  const u = new uPlot(opts, [xs, data.q3, data.q1, data.median, data.lo, data.hi], target);
  chart.u = u;
  u.over.appendChild(tooltip);

  function placeMarkers(u) {
    const height = u.bbox.height / (window.devicePixelRatio || 1);
    for (const m of chart.markers) {
      const visible = m.x >= u.scales.x.min && m.x <= u.scales.x.max;
      m.el.hidden = !visible;
      if (visible) {
        m.el.style.left = Math.round(u.valToPos(m.x, 'x')) - 1 + 'px';
        m.el.style.height = height + 'px';
      }
    }
  }

  function updateHover(u) {
    const i = u.cursor.idx;
    const c = i === null || i === undefined ? null : data.perCommit[i];
    if (readout) {
      readout.textContent = c
        ? shortSha(commits[i].sha) + ': median ' + withUnit(c.point.median, spec.unit) + ', IQR ' +
          withUnit(data.q1[i], spec.unit) + ' – ' + withUnit(data.q3[i], spec.unit) + ', n ' + c.point.n
        : '';
    }
    if (chart.hovered && group.onHover) group.onHover(i ?? null);
    if (!chart.hovered || !c) {
      tooltip.hidden = true;
      return;
    }
    const commit = commits[i];
    const p = c.point;
    tooltip.replaceChildren(
      h('div', null, h('b', {class: 'mono'}, shortSha(commit.sha)), ' ', h('span', {class: 't-sub'}, dateTime(commit.author_time || commit.time))),
      commit.subject ? h('div', null, commit.subject) : null,
      commit.author ? h('div', {class: 't-sub'}, commit.author) : null,
      h('table', null, h('tbody', null,
        h('tr', null, h('td', null, 'median'), h('td', null, withUnit(p.median, spec.unit))),
        h('tr', null, h('td', null, 'q1 – q3'), h('td', null, withUnit(data.q1[i], spec.unit) + ' – ' + withUnit(data.q3[i], spec.unit))),
        h('tr', null, h('td', null, 'min – max'), h('td', null, withUnit(p.min, spec.unit) + ' – ' + withUnit(p.max, spec.unit))),
        h('tr', null, h('td', null, 'n'), h('td', null, String(p.n))))),
      h('div', {class: 't-sub'}, 'click: pin details with links'));
    tooltip.hidden = false;
    const left = u.cursor.left;
    const top = u.cursor.top;
    const w = tooltip.offsetWidth;
    const overWidth = u.over.clientWidth;
    tooltip.style.left = (left + 14 + w > overWidth ? Math.max(0, left - 14 - w) : left + 14) + 'px';
    tooltip.style.top = Math.max(0, Math.min(top + 10, u.over.clientHeight - tooltip.offsetHeight)) + 'px';
  }

  // Alert markers: a few DOM elements over the plot (a line and a clickable label).
  for (const {x, alert} of spec.alerts || []) {
    const label = h('span', {class: 'label', title: alert.kind + ' ' + (alert.magnitude * 100).toFixed(1) + '% (alert ' + alert.id + ', ' + alert.state + ')'},
      (alert.magnitude > 0 ? '↑ +' : '↓ ') + (alert.magnitude * 100).toFixed(1) + '%');
    label.addEventListener('mousedown', (e) => e.stopPropagation());
    label.addEventListener('click', (e) => {
      e.stopPropagation();
      if (spec.onAlert) spec.onAlert(alert);
    });
    const el = h('div', {class: 'alert-marker ' + alert.kind, testid: 'alert-marker',
      dataset: {commit: commits[x].sha, alertId: String(alert.id), kind: alert.kind, metric: spec.metric}}, label);
    u.over.appendChild(el);
    chart.markers.push({x, el});
  }
  placeMarkers(u);

  // Hover, click to pin, wheel zoom, pan (shift+drag or pan mode).
  const over = u.over;
  over.addEventListener('mouseenter', () => { chart.hovered = true; });
  over.addEventListener('mouseleave', () => {
    chart.hovered = false;
    tooltip.hidden = true;
    if (group.onHover) group.onHover(null);
  });
  let downAt = null;
  over.addEventListener('mousedown', (e) => { downAt = [e.clientX, e.clientY]; });
  over.addEventListener('click', (e) => {
    if (!downAt || Math.abs(e.clientX - downAt[0]) > 3 || Math.abs(e.clientY - downAt[1]) > 3) return;
    const i = u.cursor.idx;
    if (i !== null && i !== undefined && group.onPick) group.onPick(i);
  });
  // Wheel: zoom around the cursor; the events of one frame are applied together.
  let wheelRange = null;
  over.addEventListener('wheel', (e) => {
    e.preventDefault();
    const rect = over.getBoundingClientRect();
    const [min, max] = wheelRange || [u.scales.x.min, u.scales.x.max];
    const at = min + ((e.clientX - rect.left) / rect.width) * (max - min);
    const factor = e.deltaY < 0 ? 0.8 : e.deltaY > 0 ? 1.25 : 1;
    let lo = at - (at - min) * factor;
    let hi = at + (max - at) * factor;
    const full = [-0.5, Math.max(n - 0.5, 0.5)];
    if (hi - lo > full[1] - full[0]) [lo, hi] = full;
    if (hi - lo < 2) return;
    if (lo < full[0]) [lo, hi] = [full[0], full[0] + (hi - lo)];
    if (hi > full[1]) [lo, hi] = [full[1] - (hi - lo), full[1]];
    if (!wheelRange) {
      requestAnimationFrame(() => {
        const [a, b] = wheelRange;
        wheelRange = null;
        u.setScale('x', {min: a, max: b});
      });
    }
    wheelRange = [lo, hi];
  }, {passive: false});
  // Capture phase on the wrapper: runs before uPlot's own mousedown on the overlay.
  over.parentNode.addEventListener('mousedown', (e) => {
    if (e.button !== 0 || !(e.shiftKey || group.panMode)) return;
    e.stopPropagation();
    e.preventDefault();
    const startX = e.clientX;
    const {min, max} = u.scales.x;
    const perPx = (max - min) / over.clientWidth;
    target.classList.add('panning');
    let frame = 0;
    let lastX = startX;
    const move = (ev) => {
      lastX = ev.clientX;
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        const full = [-0.5, Math.max(n - 0.5, 0.5)];
        let d = -(lastX - startX) * perPx;
        d = Math.max(full[0] - min, Math.min(full[1] - max, d));
        u.setScale('x', {min: min + d, max: max + d});
      });
    };
    const up = () => {
      target.classList.remove('panning');
      window.removeEventListener('mousemove', move);
      window.removeEventListener('mouseup', up);
    };
    window.addEventListener('mousemove', move);
    window.addEventListener('mouseup', up);
  }, true);
  // Double-click: the whole history (uPlot's own reset, then the group follows).
  over.addEventListener('dblclick', () => group.resetZoom());

  chart.setChangePoints = (indices) => {
    chart.changePoints = indices;
    u.redraw(false, false);
  };
  group.charts.push(chart);
  return chart;
}
