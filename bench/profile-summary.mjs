/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by file, and total (inclusive) time of
 * the functions matching an optional filter. Usage:
 *
 *   node bench/profile-summary.mjs <file.cpuprofile> [--top 25] [--filter regexp] [--requests N]
 *
 * --filter: also the inclusive time of the functions whose "name  file:line" matches;
 * --requests: also print each figure as microseconds per request (N = requests served while profiling).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, filter: { type: 'string' }, requests: { type: 'string' } },
});
const file = positionals[0];
if (!file) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [--top 25] [--filter regexp] [--requests N]');
  process.exit(2);
}
const top = Number(values.top);
const filter = values.filter;
const requests = values.requests ? Number(values.requests) : undefined;
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Sample counts per node, weighted by the time delta of each sample.
const self = new Map();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  total += dt;
}

const short = (url) => url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'node_modules/').replace(/^.*\/work\/main\//, '');
const keyOf = (n) => {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'}  ${short(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`;
};
const fileOf = (n) => {
  const url = n.callFrame.url;
  if (!url) return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)';
  const s = short(url);
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s);
  return m ? `node_modules/${m[1]}` : s;
};

const byFn = new Map();
const byFile = new Map();
for (const [id, t] of self) {
  const n = nodes.get(id);
  byFn.set(keyOf(n), (byFn.get(keyOf(n)) ?? 0) + t);
  byFile.set(fileOf(n), (byFile.get(fileOf(n)) ?? 0) + t);
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const print = (title, map, n) => {
  console.log(`\n${title}`);
  for (const [k, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    const per = requests ? `  ${(t / requests).toFixed(2).padStart(8)} us/req` : '';
    console.log(`  ${pct(t)}  ${(t / 1000).toFixed(0).padStart(7)} ms${per}  ${k}`);
  }
};
const idle = [...self].filter(([id]) => nodes.get(id).callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0);
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled, ${((total - idle) / 1e6).toFixed(2)} s not idle${requests ? `, ${((total - idle) / requests).toFixed(1)} us not idle per request over ${requests} requests` : ''}`);
print('self time by function', byFn, top);
print('self time by file / package', byFile, top);

if (filter) {
  // Inclusive time: a sample counts once for every distinct matching frame on its stack.
  const re = new RegExp(filter);
  const incl = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const k = keyOf(nodes.get(id));
      if (re.test(k) && !seen.has(k)) {
        seen.add(k);
        incl.set(k, (incl.get(k) ?? 0) + dt);
      }
    }
  }
  print(`inclusive time of functions matching /${filter}/`, incl, top);
}
