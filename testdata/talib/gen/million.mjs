#!/usr/bin/env node
// Generates testdata/talib/million.json.gz: every TA-Lib C function at its
// defaults (and a few other calls) on 1,000,000 bars, in a compact form.
//
//   node million.mjs OUTDIR
//
// The bars are not stored: they are built from 32-bit integer arithmetic
// only (mulberry32's integer state, prices as whole ticks divided by
// 10000), so strategy/ta's test (million_test.go) rebuilds the same
// doubles. Keep the two recipes identical. The recipe: a random walk of
// whole ticks from 100.0000; the first 20 bars flat (O=H=L=C) with zero
// volume; flat zero-volume stretches at bars 100000-100199 and
// 500000-500049; volume 0..4999.
//
// Per call it stores TA-Lib's beg and nb, the outputs at the sample bars
// (0-299, every 4999th, the last 300; null where TA-Lib has no finite
// value) and, over every bar of each output, the number of finite values,
// their sum and the sum of their magnitudes (plain sums in bar order), so
// the test checks every bar in aggregate and the samples exactly.

import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const require = createRequire(import.meta.url);
const talib = require('talib');
const [, , outDir] = process.argv;
if (!outDir) {
  process.stderr.write('usage: node million.mjs OUTDIR\n');
  process.exit(2);
}

const N = 1000000;
const SEED = 20261201;

function mulberry32u(a) {
  return function () {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function bars() {
  const next = mulberry32u(SEED);
  const c = { open: new Float64Array(N), high: new Float64Array(N), low: new Float64Array(N), close: new Float64Array(N),
    volume: new Float64Array(N), unit: new Float64Array(N), periods: new Float64Array(N) };
  let prev = 1000000; // ticks of 1e-4
  for (let i = 0; i < N; i++) {
    const flat = i < 20 || (i >= 100000 && i < 100200) || (i >= 500000 && i < 500050);
    let o, h, l, cl, v;
    if (flat) {
      o = h = l = cl = prev;
      v = 0;
    } else {
      o = prev + (next() % 41) - 20;
      cl = o + (next() % 401) - 200;
      if (cl < 10000) cl = 10000 + (next() % 100);
      if (o < 10000) o = 10000;
      h = Math.max(o, cl) + (next() % 300);
      l = Math.min(o, cl) - (next() % 300);
      if (l < 1) l = 1;
      v = next() % 5000;
    }
    c.open[i] = o / 10000; c.high[i] = h / 10000; c.low[i] = l / 10000; c.close[i] = cl / 10000; c.volume[i] = v;
    c.unit[i] = ((cl % 20001) - 10000) / 10000;
    c.periods[i] = 1 + ((i * 7919) % 57);
    prev = cl;
  }
  return c;
}

const unitFns = new Set(['ACOS', 'ASIN']);
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

// Calls besides the defaults: the ones the outside verification found off.
const extra = {
  STOCH: [{ optInFastK_Period: 5, optInSlowK_Period: 3, optInSlowK_MAType: 7, optInSlowD_Period: 3, optInSlowD_MAType: 7 }],
  MFI: [{ optInTimePeriod: 2 }],
  LINEARREG: [{ optInTimePeriod: 50 }],
};

const cols = bars();
const sample = [];
for (let i = 0; i < N; i++) if (i < 300 || i % 4999 === 0 || i >= N - 300) sample.push(i);
const calls = [];
for (const f of talib.functions) {
  const inputs = inputsFor(f);
  const def = Object.fromEntries(f.optInputs.map((o) => [o.name, o.defaultValue]));
  for (const params of [def, ...(extra[f.name] ?? [])]) {
    const call = { name: f.name, startIdx: 0, endIdx: N - 1, ...params };
    for (const [arg, col] of inputs) call[arg] = Array.from(cols[col]);
    const r = talib.execute(call);
    if (r.error) throw new Error(`${f.name} ${JSON.stringify(params)}: ${r.error}`);
    const outputs = {}, stats = {};
    for (const [k, v] of Object.entries(r.result)) {
      outputs[k] = sample.map((bar) => {
        const x = v[bar - r.begIndex];
        return bar >= r.begIndex && bar < r.begIndex + r.nbElement && Number.isFinite(x) ? x : null;
      });
      let count = 0, sum = 0, abs = 0;
      for (let j = 0; j < r.nbElement; j++) {
        const x = v[j];
        if (!Number.isFinite(x)) continue;
        count++; sum += x; abs += Math.abs(x);
      }
      stats[k] = { count, sum, abs };
    }
    calls.push({ fn: f.name, params, inputs: inputs.map((x) => x[1]), beg: r.begIndex, nb: r.nbElement, outputs, stats });
  }
  process.stderr.write('.');
}
const source = 'TA-Lib C 0.6.0-dev sources bundled in npm talib@2.0.5 (binding ' + talib.version + '), default unstable periods and compatibility';
const doc = { series: 'million', seed: SEED, n: N, source, sample, calls };
writeFileSync(`${outDir}/million.json.gz`, gzipSync(JSON.stringify(doc), { level: 9 }));
process.stderr.write(`\nmillion: ${calls.length} calls\n`);
