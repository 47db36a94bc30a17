#!/usr/bin/env node
// Generates wicket's TA-Lib C reference fixtures.
//
//   node fixtures.mjs bounds.json OUTDIR [SERIES...]
//
// (only the named series when any are given)
// For each of three deterministic series (recipes below) it calls every
// TA-Lib C function (npm talib, which bundles TA-Lib C 0.6.0-dev) at its
// defaults and at several other parameter sets, bounds included, and writes
// OUTDIR/<series>.json.gz:
//
//   {"series", "recipe", "seed", "n", "source",
//    "columns": {open, high, low, close, volume, unit, periods},
//    "sample": null | [bar indices whose real-valued outputs are stored],
//    "calls": [{"fn", "params": {optIn...: value}, "inputs": [column per TA-Lib input],
//               "beg", "nb", "outputs": {outName: [values]}}]}
//
// beg and nb are TA-Lib's outBegIdx and outNBElement (nb = 0: no output at
// all). An output array has one entry per bar (candlestick patterns, and every
// output of a series without a sample) or per sample index (real outputs of
// the long series): null before beg, or where TA-Lib's value is not finite.
// Numbers are printed with shortest round-trip formatting, so a float64
// reader recovers TA-Lib's exact doubles.
//
// bounds.json (from bounds.c) supplies each parameter's TA-Lib bounds.

import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const require = createRequire(import.meta.url);
const talib = require('talib');
const [, , boundsPath, outDir, ...only] = process.argv;
if (!boundsPath || !outDir) {
  process.stderr.write('usage: node fixtures.mjs bounds.json OUTDIR [SERIES...]\n');
  process.exit(2);
}
const bounds = JSON.parse(readFileSync(boundsPath, 'utf8'));

// ---- series -------------------------------------------------------------

function mulberry32(a) {
  return function () {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// walk builds n OHLCV bars: a geometric random walk with varied candle
// shapes (doji, long bodies, long shadows) so that candlestick patterns
// occur. opts: start price, tick, sigma, volume scale, and hooks flat(i)
// (O=H=L=C at the previous close, volume 0) and gap(i) (open multiplier).
function walk(n, seed, { start, tick, sigma, vol, flat = () => false, gap = () => 1, zeroVol = () => false, templates = null, every = 0, unit = 0 }) {
  const rand = mulberry32(seed);
  const normal = () => {
    const u1 = 1 - rand();
    const u2 = rand();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
  const round = (x) => Math.max(tick, Math.round(x / tick) * tick);
  const c = { open: [], high: [], low: [], close: [], volume: [] };
  let prev = start;
  let tpl = null, tplAt = 0, tplBase = 0, tplNext = 0;
  for (let i = 0; i < n; i++) {
    // Injected candle sequences: bar j of a template is [open, high, low,
    // close] in units of `unit` relative to the close before it.
    if (templates && !tpl && i > 0 && i % every === 0) {
      tpl = templates[tplNext++ % templates.length];
      tplAt = i;
      tplBase = prev;
    }
    if (tpl) {
      const [o, h, l, cl] = tpl[i - tplAt].map((x) => round(tplBase * (1 + x * unit)));
      c.open.push(o); c.high.push(h); c.low.push(l); c.close.push(cl);
      c.volume.push(Math.round(vol * Math.exp(0.5 * normal())));
      prev = cl;
      if (i - tplAt === tpl.length - 1) tpl = null;
      continue;
    }
    const u = rand();
    if (flat(i)) {
      const p = round(prev);
      c.open.push(p); c.high.push(p); c.low.push(p); c.close.push(p); c.volume.push(0);
      continue;
    }
    let body = sigma * normal();
    if (u < 0.12) body *= 0.03; // doji-like
    else if (u > 0.93) body *= 4; // long candle
    const shadow = sigma * Math.exp(0.8 * normal());
    const open = round(prev * Math.exp(0.15 * sigma * normal()) * gap(i));
    const close = round(open * Math.exp(body));
    const high = round(Math.max(open, close) * Math.exp(Math.abs(0.6 * shadow * normal())));
    const low = round(Math.min(open, close) * Math.exp(-Math.abs(0.6 * shadow * normal())));
    const v = zeroVol(i) ? 0 : Math.round(vol * Math.exp(0.5 * normal()) * (1 + 20 * Math.abs(close / open - 1)));
    c.open.push(open); c.high.push(Math.max(high, open, close)); c.low.push(Math.min(low, open, close));
    c.close.push(close); c.volume.push(v);
    prev = close;
  }
  // unit: a series inside [-1, 1] for ACOS/ASIN; periods: MAVP's period input.
  const lo = Math.min(...c.close), hi = Math.max(...c.close);
  c.unit = c.close.map((x) => (hi > lo ? Math.round(1e6 * ((2 * (x - lo)) / (hi - lo) - 1)) / 1e6 : 0));
  c.periods = c.close.map((_, i) => [1, 2, 3, 5, 8, 13, 21, 34, 40, 55][Math.floor(rand() * 10)] + (i % 3));
  return c;
}

const series = [
  {
    name: 'flat', seed: 11, n: 300,
    recipe: 'walk from 100 (tick 1e-4, sigma 0.003); bars 50-79 and 160-209 flat (O=H=L=C, volume 0); every 17th bar volume 0; opens gapped x1.2 at bar 120 and x0.85 at bar 230',
    opts: {
      start: 100, tick: 1e-4, sigma: 0.003, vol: 1000,
      flat: (i) => (i >= 50 && i < 80) || (i >= 160 && i < 210),
      gap: (i) => (i === 120 ? 1.2 : i === 230 ? 0.85 : 1),
      zeroVol: (i) => i % 17 === 0,
    },
  },
  {
    name: 'tiny', seed: 23, n: 300,
    recipe: 'walk from 1e-4 (tick 1e-9, sigma 0.004), volume around 1e6',
    opts: { start: 1e-4, tick: 1e-9, sigma: 0.004, vol: 1e6 },
  },
  {
    name: 'patterns', seed: 41, n: 300, only: 'Pattern Recognition',
    recipe: 'walk from 100 (tick 1e-4, sigma 0.002) with a candle template every 20 bars (kicking, counterattack, mat hold, three stars in the south, concealing baby swallow, each both ways where it has two); candlestick patterns only',
    opts: { start: 100, tick: 1e-4, sigma: 0.002, vol: 1000, every: 20, unit: 0.004, templates: candleTemplates() },
  },
  {
    name: 'huge', seed: 53, n: 200, basic: true,
    recipe: 'walk from 5e7 (tick 1, sigma 0.003), volume around 1e9; defaults, first alternative and lower bounds only',
    opts: { start: 5e7, tick: 1, sigma: 0.003, vol: 1e9 },
  },
  {
    name: 'long', seed: 37, n: 20000,
    recipe: 'walk from 100 (tick 1e-4, sigma 0.002), 20000 bars; real outputs stored at bars 0-149, every 200th bar and the last 50',
    opts: { start: 100, tick: 1e-4, sigma: 0.002, vol: 1000 },
    sample: (n) => {
      const s = [];
      for (let i = 0; i < n; i++) if (i < 150 || i % 200 === 0 || i >= n - 50) s.push(i);
      return s;
    },
  },
];

// candleTemplates are sequences built to meet TA-Lib's definitions of the
// rarest patterns ([open, high, low, close] in units relative to the
// close before the sequence), so that the fixtures hold them firing.
function candleTemplates() {
  const mirror = (t) => t.map(([o, h, l, c]) => [-o, -l, -h, -c]);
  const kicking = [[0, 0, -3, -3], [1, 4, 1, 4]];
  const counterattack = [[0, 0.2, -3.2, -3], [-6, -2.9, -6.1, -3]];
  const matHold = [[0, 4.1, -0.1, 4], [4.6, 4.65, 4.35, 4.4], [4.2, 4.25, 3.85, 3.9], [4, 4.05, 3.65, 3.7], [3.8, 5.6, 3.75, 5.5]];
  const stars = [[0, 0.05, -4.5, -2], [-1, -0.95, -3.5, -2.2], [-2.3, -2.3, -2.5, -2.5]];
  const baby = [[0, 0, -2, -2], [-2.2, -2.2, -4, -4], [-4.5, -3.5, -5.1, -5], [-3.3, -3.2, -6.1, -6]];
  return [kicking, mirror(kicking), counterattack, mirror(counterattack), matHold, stars, baby];
}

// ---- parameter sets -----------------------------------------------------

// alt gives a non-default value for a parameter (a second and third set).
function altValues(fn, name, b) {
  const d = b.default;
  if (b.type === 'list') return [];
  if (b.type === 'real') {
    const table = {
      optInNbDevUp: [1.5, -0.5], optInNbDevDn: [0.5, 3], optInNbDev: [2.5, -1],
      optInVFactor: [0, 1], optInFastLimit: [0.99, 0.2], optInSlowLimit: [0.01, 0.3],
      optInAcceleration: [0.05, 0], optInMaximum: [0.5, 0.02],
      optInStartValue: [fn === 'SAREXT' ? -1 : 0, 50], optInOffsetOnReverse: [0.01, 0],
      optInAccelerationInitLong: [0.01, 0], optInAccelerationLong: [0.03, 0.2], optInAccelerationMaxLong: [0.3, 0.05],
      optInAccelerationInitShort: [0.04, 0], optInAccelerationShort: [0.01, 0.3], optInAccelerationMaxShort: [0.1, 0.5],
      optInPenetration: [0.6, 1.5],
    };
    return table[name] ?? [d * 2];
  }
  // Integers: one value a little above the default, one well below it
  // (both within bounds); the bounds themselves are separate sets.
  const up = Math.min(b.max, Math.round(d * 1.6) + 1);
  const down = Math.max(b.min, Math.round(d / 2));
  return [up, down];
}

function paramSets(f, basic) {
  const b = bounds[f.name] ?? {};
  const names = f.optInputs.map((o) => o.name);
  const def = Object.fromEntries(f.optInputs.map((o) => [o.name, o.defaultValue]));
  const sets = [def];
  if (names.length === 0) return sets;
  // MAVP: the period clamps and every MA kind (inside the clamps).
  if (f.name === 'MAVP') {
    sets.push({ optInMinPeriod: 2, optInMaxPeriod: 2, optInMAType: 0 }, { optInMinPeriod: 40, optInMaxPeriod: 10, optInMAType: 1 },
      { optInMinPeriod: 2, optInMaxPeriod: 100000, optInMAType: 2 });
    for (let t = 0; t <= 8; t++) sets.push({ optInMinPeriod: 5, optInMaxPeriod: 20, optInMAType: t });
    return sets;
  }
  const ints = names.filter((n) => b[n].type === 'int');
  const lists = names.filter((n) => b[n].type === 'list');
  const reals = names.filter((n) => b[n].type === 'real');
  const alt = (k) => Object.fromEntries(names.map((n) => [n, b[n].type === 'list' ? def[n] : altValues(f.name, n, b[n])[k] ?? def[n]]));
  sets.push(alt(0), alt(1));
  if (basic) {
    if (ints.length) {
      const lo = { ...def };
      for (const n of ints) lo[n] = b[n].min;
      sets.push(lo);
    }
    return dedupe(names, sets);
  }
  if (ints.length) {
    const lo = { ...def };
    for (const n of ints) lo[n] = b[n].min;
    sets.push(lo);
    const hi = { ...def };
    for (const n of ints) hi[n] = b[n].max;
    sets.push(hi);
    // Each integer alone at its lower bound (e.g. fast=2 with slow=26).
    if (ints.length > 1) for (const n of ints) sets.push({ ...def, [n]: b[n].min });
  }
  if (reals.length) {
    const lo = { ...def };
    for (const n of reals) lo[n] = Math.max(b[n].min, -5);
    sets.push(lo);
  }
  // Swapped fast/slow: TA-Lib orders them itself.
  if ('optInFastPeriod' in def && 'optInSlowPeriod' in def) {
    sets.push({ ...def, optInFastPeriod: def.optInSlowPeriod, optInSlowPeriod: def.optInFastPeriod });
  }
  // Every moving-average kind, at the defaults and at the first alternative.
  for (let t = 0; t <= 8; t++) {
    if (!lists.length) break;
    for (const base of [def, alt(0)]) {
      const s = { ...base };
      for (const n of lists) s[n] = t;
      sets.push(s);
    }
  }
  // Mixed kinds where there are several.
  if (lists.length > 1) {
    const mixes = [[1, 0, 3], [4, 2, 8], [6, 5, 7], [8, 1, 2]];
    for (const m of mixes) {
      const s = { ...def };
      lists.forEach((n, i) => (s[n] = m[i % m.length]));
      sets.push(s);
    }
  }
  return dedupe(names, sets);
}

function dedupe(names, sets) {
  const seen = new Set();
  return sets.filter((s) => {
    const k = JSON.stringify(names.map((n) => s[n]));
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// ---- inputs -------------------------------------------------------------

const unitFns = new Set(['ACOS', 'ASIN']);
// inputsFor lists, in TA-Lib's argument order, [argument, column] pairs.
function inputsFor(f) {
  const m = [];
  for (const i of f.inputs) {
    if (i.type === 'price') for (const k of Object.values(i.flags)) m.push([k, k]);
    else if (i.name === 'inReal') m.push(['inReal', unitFns.has(f.name) ? 'unit' : 'close']);
    else if (i.name === 'inReal0') m.push(['inReal0', 'high']);
    else if (i.name === 'inReal1') m.push(['inReal1', 'low']);
    else if (i.name === 'inPeriods') m.push(['inPeriods', 'periods']);
  }
  return m;
}

// ---- run ----------------------------------------------------------------

const source = 'TA-Lib C 0.6.0-dev sources bundled in npm talib@2.0.5 (binding ' + talib.version + '), default unstable periods and compatibility';
let total = 0;
for (const s of series) {
  if (only.length && !only.includes(s.name)) continue;
  const cols = walk(s.n, s.seed, s.opts);
  const sample = s.sample ? s.sample(s.n) : null;
  const calls = [];
  for (const f of talib.functions) {
    if (s.only && f.group !== s.only) continue;
    const inputs = inputsFor(f);
    const intOut = new Set(f.group === 'Pattern Recognition' ? f.outputs.map((o) => o.name) : []);
    for (const params of paramSets(f, s.basic)) {
      const call = { name: f.name, startIdx: 0, endIdx: s.n - 1, ...params };
      for (const [arg, col] of inputs) call[arg] = cols[col];
      const r = talib.execute(call);
      if (r.error) throw new Error(`${s.name} ${f.name} ${JSON.stringify(params)}: ${r.error}`);
      const outputs = {};
      for (const [k, v] of Object.entries(r.result)) {
        const at = intOut.has(k) || !sample ? null : sample;
        const len = at ? at.length : s.n;
        const a = new Array(len).fill(null);
        for (let j = 0; j < len; j++) {
          const bar = at ? at[j] : j;
          const x = v[bar - r.begIndex];
          if (bar >= r.begIndex && bar < r.begIndex + r.nbElement && Number.isFinite(x)) a[j] = x;
        }
        outputs[k] = a;
      }
      calls.push({ fn: f.name, params, inputs: inputs.map((x) => x[1]), beg: r.begIndex, nb: r.nbElement, outputs });
    }
  }
  total += calls.length;
  const doc = { series: s.name, recipe: s.recipe, seed: s.seed, n: s.n, source, columns: cols, sample, calls };
  writeFileSync(`${outDir}/${s.name}.json.gz`, gzipSync(JSON.stringify(doc), { level: 9 }));
  process.stderr.write(`${s.name}: ${calls.length} calls\n`);
}
process.stderr.write(`${total} calls in all\n`);
