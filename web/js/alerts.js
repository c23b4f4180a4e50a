// SPDX-License-Identifier: Apache-2.0
// The alerts page (#/p/{p}/alerts?state=&kind=&alert=&group=): alerts of tracked branches by
// alert group (alerts of a branch whose commit ranges overlap, with their narrowest common range),
// with their bisects, and triage of one alert or of a whole group (needs a token with the triage
// scope). ?group=G shows that group only (the webhook's link).
import {h, route, message, select} from './dom.js';
import {api, errorBlock, errorText, mapLimit} from './api.js';
import {shortSha, dateTime, pct, pctRange, pValue, withUnit, ago} from './format.js';

const STATES = ['open', 'acknowledged', 'false_positive', 'resolved', 'went_away', 'all'];
const TRIAGE = [
  {state: 'acknowledged', label: 'Acknowledge', testid: 'triage-acknowledge'},
  {state: 'false_positive', label: 'False positive', testid: 'triage-false-positive'},
  {state: 'resolved', label: 'Resolved', testid: 'triage-resolved'},
  {state: 'went_away', label: 'Went away', testid: 'triage-went-away'},
  {state: 'open', label: 'Reopen', testid: 'triage-reopen'},
];
// A whole group's triage: every member at once (PATCH .../alert-groups/{id}).
const GROUP_TRIAGE = [
  {state: 'acknowledged', label: 'Ack group', testid: 'group-acknowledge'},
  {state: 'resolved', label: 'Fixed', testid: 'group-resolved'},
  {state: 'false_positive', label: 'Invalid', testid: 'group-false-positive'},
  {state: 'went_away', label: 'Went away', testid: 'group-went-away'},
  {state: 'open', label: 'Reopen', testid: 'group-reopen'},
];

const label = (state) => String(state).replace('_', ' ');

// The group's head: its narrowest range, members by state, the most significant member, its
// bisect, and the group triage buttons. `onChange(answer, text)` gets the group after a triage
// (GET .../alert-groups/{id}'s shape, members included); `saved` is the last triage's outcome.
function groupHead(project, key, members, group, onChange, saved) {
  const range = (group && group.range) || (members[0].range || {});
  const head = h('div', {class: 'alert-group-head'},
    h('h3', null, group ? 'Group ' + group.id + ' · ' : '', 'Range ', h('span', {class: 'mono'},
      shortSha(range.last_good && range.last_good.sha) + '..' + shortSha(range.first_bad && range.first_bad.sha))),
    h('span', {class: 'muted'}, (group ? group.member_count : members.length) + ' alert' + ((group ? group.member_count : members.length) === 1 ? '' : 's'),
      group ? [' (', Object.entries(group.states).filter(([, n]) => n > 0).map(([st, n]) => label(st) + ' ' + n).join(', '), ')'] : '',
      ' · last good ', commitLabel(range.last_good), ' · first bad ', commitLabel(range.first_bad)),
    group ? h('span', {class: 'badge s-' + (group.state === 'open' ? 'open' : 'resolved'), testid: 'group-state'}, group.state) : null);
  if (!group) return head;
  const note = h('input', {type: 'text', placeholder: 'note for every alert (optional)', testid: 'group-note', value: ''});
  const status = h('span', {testid: 'group-triage-status', class: saved ? 'triage-ok' : ''}, saved || '');
  const buttons = GROUP_TRIAGE.map((t) => h('button', {type: 'button', testid: t.testid, onclick: async (e) => {
    const all = e.target.parentNode.querySelectorAll('button');
    all.forEach((b) => { b.disabled = true; });
    status.className = '';
    status.textContent = 'saving…';
    const body = {state: t.state};
    if (note.value.trim()) body.note = note.value.trim();
    try {
      const answer = await api.triageGroup(project, group.id, body);
      onChange(answer, 'saved: ' + (answer.member_count || 0) + ' alerts now ' + label(t.state) + ' (group ' + answer.state + ')');
    } catch (err) {
      all.forEach((b) => { b.disabled = false; });
      status.className = 'triage-error';
      status.textContent = errorText(err) + (err.isAuth
        ? ' — triage needs a token with the triage scope: use the "Token" button at the top right.' : '');
    }
  }}, t.label));
  return h('div', null, head,
    h('div', {class: 'group-sub muted'}, 'most significant: #' + group.most_significant,
      ' · bisect: ', group.bisect_id ? '#' + group.bisect_id : h('span', {class: 'cmd'}, 'perfwarden bisect --group ' + group.id)),
    h('div', {class: 'triage group-triage', testid: 'group-triage'}, note, buttons, status));
}

function commitLabel(c) {
  if (!c) return '–';
  return h('span', {title: (c.subject || '') + (c.author ? ' — ' + c.author : '')},
    h('span', {class: 'mono'}, shortSha(c.sha)), c.subject ? ' ' + c.subject : '');
}

function bisectLine(project, alert, detail) {
  if (!detail) return h('div', {class: 'bisect muted'}, 'loading bisects…');
  const bisects = detail.bisects || [];
  const hint = h('span', {class: 'cmd', testid: 'bisect-hint'}, 'perfwarden bisect --alert ' + alert.id);
  if (!bisects.length) return h('div', {class: 'bisect muted', testid: 'bisect-status'}, 'No bisect yet: ', hint);
  const b = bisects[0];
  return h('div', {class: 'bisect', testid: 'bisect-status'}, 'Bisect #' + b.id + ': ',
    h('b', null, b.state), b.culprit ? [' · culprit ', h('span', {class: 'mono', testid: 'bisect-culprit'}, b.culprit.slice(0, 12))] : '',
    b.created_by ? ' · by ' + b.created_by : '', ' · ', dateTime(b.created_at),
    bisects.length > 1 ? ' (' + bisects.length + ' bisects)' : '', ' · ', hint);
}

// A regression, or a creep (a drift) in the metric's worse direction.
function worse(alert) {
  if (alert.kind !== 'creep') return alert.kind === 'regression';
  return (alert.magnitude > 0) === ((alert.series || {}).direction !== 'higher');
}

function alertRow(project, alert, detail, highlight, onChange) {
  const s = alert.series || {};
  const note = h('input', {type: 'text', placeholder: 'note (optional)', testid: 'triage-note', value: ''});
  const status = h('span', {testid: 'triage-status'});
  const buttons = TRIAGE.filter((t) => t.state !== alert.state && (t.state !== 'open' || alert.state !== 'open')).map((t) =>
    h('button', {type: 'button', testid: t.testid, onclick: async (e) => {
      const all = e.target.parentNode.querySelectorAll('button');
      all.forEach((b) => { b.disabled = true; });
      status.className = '';
      status.textContent = 'saving…';
      const body = {state: t.state};
      if (note.value.trim()) body.note = note.value.trim();
      try {
        const answer = await api.triage(project, alert.id, body);
        const updated = answer.alert || answer;
        onChange(updated, 'now ' + String(updated.state).replace('_', ' '));
      } catch (err) {
        all.forEach((b) => { b.disabled = false; });
        status.className = 'triage-error';
        status.textContent = errorText(err) + (err.isAuth
          ? ' — triage needs a token with the triage scope: use the "Token" button at the top right.' : '');
      }
    }}, t.label));
  const link = route(['p', project, 'series'], {suite: s.suite, benchmark: s.benchmark, metric: s.metric, branch: s.branch, testbed: s.testbed});
  const env = alert.environment_change;
  return h('div', {class: 'alert-row' + (highlight ? ' highlight' : ''), testid: 'alert-row',
    id: 'alert-' + alert.id, dataset: {alertId: String(alert.id), state: alert.state}},
  h('div', {class: 'alert-main'},
    h('span', {class: 'badge k-' + alert.kind}, alert.kind),
    h('span', {class: 'series-name'}, s.benchmark, ' · ', s.metric),
    h('span', {class: worse(alert) ? 'worse' : 'better'}, h('b', null, pct(alert.magnitude)), ' ', pctRange(alert.ci)),
    alert.creep ? h('span', {class: 'muted', testid: 'alert-creep'}, 'drift over points ' + alert.creep.start + '–' + alert.creep.end +
      ', ' + pct(alert.creep.slope, 2) + ' per point ' + pctRange([alert.creep.slope_low, alert.creep.slope_high], 2)) : null,
    h('span', {class: 'muted'}, withUnit(alert.level_before, s.unit), ' → ', withUnit(alert.level_after, s.unit)),
    h('span', {class: 'badge s-' + alert.state, testid: 'alert-state'}, alert.state.replace('_', ' ')),
    alert.cause === 'environment' ? h('span', {class: 'badge v-INCONCLUSIVE'}, 'environment') : null,
    h('a', {href: link, testid: 'alert-series-link'}, 'series →'),
    h('span', {class: 'faint'}, '#' + alert.id)),
  h('div', {class: 'alert-sub'},
    h('span', null, 'branch ', s.branch, ' · testbed ', s.testbed, s.suite ? ' · suite ' + s.suite : ''),
    h('span', null, 'detectors: ', (alert.detectors || []).join(', ') || '–'),
    h('span', null, 'p ', pValue(alert.p_value), ' · q ', pValue(alert.q_value)),
    h('span', null, 'raised ', ago(alert.created_at)),
    alert.state_changed_by ? h('span', null, alert.state + ' by ', alert.state_changed_by, ' ', ago(alert.state_changed_at)) : null,
    alert.note ? h('span', {testid: 'alert-note'}, 'note: “', alert.note, '”') : null,
    env ? h('span', null, 'testbed changed: ' + (env.changed || []).join(', ')) : null),
  bisectLine(project, alert, detail),
  h('div', {class: 'triage'}, note, buttons, status));
}

export async function renderAlerts(ctx) {
  const {root, project, query} = ctx;
  const state = STATES.includes(query.state) ? query.state : 'open';
  const kind = query.kind || '';
  const highlight = query.alert ? Number(query.alert) : null;
  const only = query.group ? Number(query.group) : null;
  root.appendChild(h('div', {class: 'page-head'}, h('h1', null, 'Alerts'), h('span', {class: 'sub'}, project + ' · tracked branches')));
  const filters = {state, kind: kind || undefined, alert: query.alert, group: query.group};
  root.appendChild(h('div', {class: 'toolbar'},
    h('label', null, 'State', select({testid: 'alert-state-filter', onchange: (e) => ctx.setQuery({...filters, state: e.target.value})},
      STATES.map((s) => ({value: s, label: s.replace('_', ' ')})), state)),
    h('label', null, 'Kind', select({testid: 'alert-kind-filter', onchange: (e) => ctx.setQuery({...filters, kind: e.target.value})},
      [{value: '', label: 'all kinds'}, 'regression', 'improvement', 'creep'], kind))));
  const list = h('div', {testid: 'alert-list'});
  root.appendChild(list);
  let res;
  try {
    res = await api.alerts(project, {state, kind: kind || undefined, limit: 200});
  } catch (err) {
    if (!ctx.alive()) return;
    root.appendChild(errorBlock(err, 'Cannot list alerts'));
    ctx.fail(errorText(err));
    return;
  }
  if (!ctx.alive()) return;
  let alerts = (res.alerts || []).filter((a) => !only || a.group_id === only);
  // The groups (their narrowest range, counts and bisect); the page works without them.
  const groupInfo = new Map();
  try {
    const listed = await api.alertGroups(project, {state: 'all', limit: 500});
    for (const g of listed.groups || []) groupInfo.set(g.id, g);
  } catch {
    // An older server: alerts grouped by their own range.
  }
  if (!ctx.alive()) return;
  // A linked alert (from a chart marker) is shown even when another page of the list holds it.
  if (highlight && !alerts.some((a) => a.id === highlight)) {
    try {
      const one = await api.alert(project, highlight);
      alerts = [one.alert || one, ...alerts];
    } catch {
      // Not in this project: the list as it is.
    }
  }
  if (!alerts.length) {
    list.appendChild(message('empty', state === 'all' ? 'No alerts.' : 'No ' + state.replace('_', ' ') + ' alerts.',
      ' The history analysis raises one when a series of a tracked branch (main, master) moves by more than the threshold.'));
    ctx.ready();
    return;
  }
  if (res.next_cursor) list.appendChild(h('div', {class: 'muted'}, 'Showing the newest ' + alerts.length + ' alerts; narrow the filters for older ones.'));
  const groups = new Map();
  for (const a of alerts) {
    const key = a.group_id ? 'g' + a.group_id : a.group || String(a.id);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(a);
  }
  const details = new Map();
  const slots = new Map();
  const current = new Map();
  const place = (alert) => {
    current.set(alert.id, alert);
    const old = slots.get(alert.id);
    const row = alertRow(project, alert, details.get(alert.id), alert.id === highlight, (updated, text) => {
      place(updated);
      const status = slots.get(alert.id).querySelector('[data-testid=triage-status]');
      status.className = 'triage-ok';
      status.textContent = 'saved: ' + text;
    });
    if (old) old.replaceWith(row);
    slots.set(alert.id, row);
    return row;
  };
  for (const [key, members] of groups) {
    const group = members[0].group_id ? groupInfo.get(members[0].group_id) : null;
    let head = null;
    const onChange = (answer, text) => {
      for (const m of answer.members || []) {
        if (!slots.has(m.id)) continue;
        place(m);
        const status = slots.get(m.id).querySelector('[data-testid=triage-status]');
        status.className = 'triage-ok';
        status.textContent = 'saved with its group: now ' + label(m.state);
      }
      const fresh = groupHead(project, key, members, answer, onChange, text);
      head.replaceWith(fresh);
      head = fresh;
    };
    head = groupHead(project, key, members, group, onChange);
    list.appendChild(h('div', {class: 'alert-group', testid: 'alert-group', dataset: {group: key, groupId: group ? String(group.id) : ''}},
      head, members.map((a) => place(a))));
  }
  if (highlight && slots.has(highlight)) slots.get(highlight).scrollIntoView({block: 'center'});
  // The bisects of each alert (GET alerts/{id}).
  await mapLimit(alerts, 4, async (a) => {
    try {
      const d = await api.alert(project, a.id);
      details.set(a.id, d.alert ? {...d.alert, bisects: d.bisects || d.alert.bisects} : d);
    } catch {
      details.set(a.id, {bisects: []});
    }
    if (ctx.alive()) place(current.get(a.id));
  });
  if (!ctx.alive()) return;
  ctx.ready();
}

