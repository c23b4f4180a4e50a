// SPDX-License-Identifier: Apache-2.0
// Tiny DOM helpers: every page builds its elements with h(), never with innerHTML, so that
// names from uploads (free text) can never become markup.

// h("a", {href: "#/", class: "x", dataset: {testid: "y"}, onclick: fn}, "text", child, [more])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'dataset') Object.assign(el.dataset, value);
      else if (key === 'style' && typeof value === 'object') Object.assign(el.style, value);
      else if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value);
      } else if (key === 'testid') el.setAttribute('data-testid', value);
      else if (key in el && typeof value !== 'string') el[key] = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

// An SVG element (the distribution plots).
const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null) continue;
      el.setAttribute(key, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// A hash link: link(["p", project, "runs", id], {q: 1}) -> "#/p/<project>/runs/<id>?q=1".
export function route(segments, query) {
  let path = '#/' + segments.map((s) => encodeURIComponent(s)).join('/');
  const qs = query ? queryString(query) : '';
  return qs ? path + '?' + qs : path;
}

export function queryString(query) {
  const parts = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(value));
  }
  return parts.join('&');
}

// A message block: kind "error" | "empty" | "info".
export function message(kind, ...children) {
  return h('div', {class: 'msg msg-' + kind, testid: 'msg-' + kind, role: kind === 'error' ? 'alert' : null},
    ...children);
}

// A select box: options [{value, label}] or strings.
export function select(attrs, options, current) {
  const el = h('select', attrs);
  for (const option of options) {
    const value = typeof option === 'string' ? option : option.value;
    const label = typeof option === 'string' ? option : option.label;
    const o = h('option', {value}, label);
    if (value === current) o.selected = true;
    el.appendChild(o);
  }
  return el;
}
