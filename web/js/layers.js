// SPDX-License-Identifier: Apache-2.0
// The canvas layers of a history chart that uPlot does not draw itself: every repetition as a
// point, the interquartile band, and change points. Written for 10,000 commits x 10
// repetitions: typed arrays, work proportional to the visible points and the plot's pixels.

const CHANGE_POINT = '#7b4fb0';

// Draws every repetition of the visible commits, jittered across the commit's slot when zoomed
// in. The points are splatted into a per-pixel count buffer (typed arrays, O(visible points +
// plot pixels)); overlapping points darken (alpha 1 - (1 - a)^count), and one drawImage puts
// the layer on the canvas. A canvas path of 100,000 rectangles is ten times slower.
const POINT_RGB = [31, 78, 140];
const POINT_ALPHA = 0.32;
const BAND_ALPHA = 0.15;
const layer = {canvas: null, ctx: null, image: null, counts: null, colTop: null, colBot: null, w: 0, h: 0, lut: null, band: 0, lutOver: null};

function pointLayer(w, h) {
  if (layer.w !== w || layer.h !== h || !layer.canvas) {
    layer.canvas = document.createElement('canvas');
    layer.canvas.width = w;
    layer.canvas.height = h;
    layer.ctx = layer.canvas.getContext('2d');
    layer.image = layer.ctx.createImageData(w, h);
    layer.counts = new Uint16Array(w * h);
    layer.colTop = new Float32Array(w);
    layer.colBot = new Float32Array(w);
    layer.w = w;
    layer.h = h;
  }
  if (!layer.band) {
    const a = Math.round(255 * BAND_ALPHA);
    layer.band = ((a << 24) | (POINT_RGB[2] << 16) | (POINT_RGB[1] << 8) | POINT_RGB[0]) >>> 0;
    // Points over the band: alphas combined as 1 - (1 - band)(1 - points).
    layer.lutOver = new Uint32Array(256);
    for (let c = 1; c < 256; c++) {
      const al = Math.round(255 * (1 - (1 - BAND_ALPHA) * Math.pow(1 - POINT_ALPHA, c)));
      layer.lutOver[c] = ((al << 24) | (POINT_RGB[2] << 16) | (POINT_RGB[1] << 8) | POINT_RGB[0]) >>> 0;
    }
  }
  if (!layer.lut) {
    // Premultiplied-free RGBA words (little endian: ABGR) for counts 1..255.
    layer.lut = new Uint32Array(256);
    for (let c = 1; c < 256; c++) {
      const a = Math.round(255 * (1 - Math.pow(1 - POINT_ALPHA, c)));
      layer.lut[c] = ((a << 24) | (POINT_RGB[2] << 16) | (POINT_RGB[1] << 8) | POINT_RGB[0]) >>> 0;
    }
  }
  return layer;
}

export function drawRepetitions(u, data) {
  const {offsets, values} = data;
  const n = offsets.length - 1;
  if (!values.length) return;
  const {left, top, width, height} = u.bbox;
  const xs = u.scales.x;
  const ys = u.scales.y;
  if (xs.min === null || ys.min === null || ys.max === ys.min || xs.max === xs.min) return;
  const w = Math.max(1, Math.round(width));
  const hgt = Math.max(1, Math.round(height));
  const kx = w / (xs.max - xs.min);
  const ky = hgt / (ys.max - ys.min);
  const i0 = Math.max(0, Math.floor(xs.min));
  const i1 = Math.min(n - 1, Math.ceil(xs.max));
  const ratio = window.devicePixelRatio || 1;
  const size = Math.max(2, Math.round(2.5 * ratio));
  const half = size >> 1;
  const spread = Math.min(kx * 0.5, 14 * ratio);
  const L = pointLayer(w, hgt);
  const counts = L.counts;
  counts.fill(0);
  let x1 = -1;
  for (let i = i0; i <= i1; i++) {
    const a = offsets[i];
    const b = offsets[i + 1];
    const m = b - a;
    if (!m) continue;
    const cx = (i - xs.min) * kx;
    for (let j = a; j < b; j++) {
      const jitter = m > 1 && spread > 2 ? ((j - a) / (m - 1) - 0.5) * spread : 0;
      const px = Math.round(cx + jitter) - half;
      const py = Math.round((ys.max - values[j]) * ky) - half;
      const xa = px < 0 ? 0 : px;
      const xb = px + size > w ? w : px + size;
      const ya = py < 0 ? 0 : py;
      const yb = py + size > hgt ? hgt : py + size;
      if (xa >= xb || ya >= yb) continue;
      if (xb > x1) x1 = xb;
      for (let y = ya; y < yb; y++) {
        const row = y * w;
        for (let x = xa; x < xb; x++) counts[row + x]++;
      }
    }
  }
  const pixels = new Uint32Array(L.image.data.buffer);
  pixels.fill(0);
  const banded = fillBand(L, data, xs, ys, w, hgt, kx, ky, i0, i1);
  if (x1 < 0 && !banded) return;
  const lut = L.lut;
  const over = L.lutOver;
  const band = L.band;
  for (let k = 0; k < counts.length; k++) {
    const c = counts[k];
    if (c) pixels[k] = (pixels[k] === band ? over : lut)[c > 255 ? 255 : c];
  }
  L.ctx.putImageData(L.image, 0, 0);
  u.ctx.drawImage(L.canvas, left, top);
}

// The interquartile band (q1..q3) into the layer: per pixel column the span between the
// interpolated q3 and q1 (the widest span when several commits share a column). uPlot's own
// bands clip a path, which doubles a redraw of 10,000 commits.
function fillBand(L, data, xs, ys, w, hgt, kx, ky, i0, i1) {
  const {q1, q3} = data;
  const top = L.colTop;
  const bot = L.colBot;
  top.fill(Infinity);
  bot.fill(-Infinity);
  let prev = -1;
  let any = false;
  const put = (c, yt, yb) => {
    if (c < 0 || c >= w) return;
    if (yt < top[c]) top[c] = yt;
    if (yb > bot[c]) bot[c] = yb;
    any = true;
  };
  const lo = Math.max(0, i0 - 1);
  const hi = Math.min(q1.length - 1, i1 + 1);
  for (let i = lo; i <= hi; i++) {
    if (q1[i] === null || q3[i] === null) continue;
    const x = (i - xs.min) * kx;
    const yt = (ys.max - q3[i]) * ky;
    const yb = (ys.max - q1[i]) * ky;
    if (prev >= 0) {
      const px = (prev - xs.min) * kx;
      const pt = (ys.max - q3[prev]) * ky;
      const pb = (ys.max - q1[prev]) * ky;
      const ca = Math.max(0, Math.ceil(px));
      const cb = Math.min(w - 1, Math.floor(x));
      for (let c = ca; c <= cb; c++) {
        const t = (c - px) / (x - px);
        put(c, pt + (yt - pt) * t, pb + (yb - pb) * t);
      }
    }
    put(Math.round(x), yt, yb);
    prev = i;
  }
  if (!any) return false;
  const pixels = new Uint32Array(L.image.data.buffer);
  const band = L.band;
  for (let c = 0; c < w; c++) {
    if (top[c] === Infinity) continue;
    const ya = Math.max(0, Math.round(top[c]));
    const yb = Math.min(hgt - 1, Math.round(bot[c]));
    for (let y = ya; y <= yb; y++) pixels[y * w + c] = band;
  }
  return true;
}

export function drawChangePoints(u, indices) {
  if (!indices || !indices.length) return;
  const {top, height} = u.bbox;
  const ctx = u.ctx;
  const ratio = window.devicePixelRatio || 1;
  ctx.save();
  ctx.strokeStyle = CHANGE_POINT;
  ctx.lineWidth = 1.5 * ratio;
  ctx.setLineDash([5 * ratio, 4 * ratio]);
  for (const x of indices) {
    if (x < u.scales.x.min || x > u.scales.x.max) continue;
    const px = Math.round(u.valToPos(x, 'x', true)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(px, top);
    ctx.lineTo(px, top + height);
    ctx.stroke();
  }
  ctx.restore();
}
