// What changed between two revisions' `content.input`: pure functions, no DOM.

/** JSON with every object's keys sorted: two values are the same when their canonical texts are. */
const canonical = (v) => (Array.isArray(v)
  ? `[${v.map(canonical).join(',')}]`
  : v !== null && typeof v === 'object'
    ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`
    : JSON.stringify(v));
const text = (v) => (v === undefined ? undefined : canonical(v));
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An object's leaves by dot path; arrays, scalars and `{}` are leaves, compared whole. */
function leaves(value, prefix = '', out = new Map()) {
  if (isObject(value) && (prefix === '' || Object.keys(value).length > 0)) {
    for (const [k, v] of Object.entries(value)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix !== '') {
    out.set(prefix, value);
  }
  return out;
}

const scalars = (v) => Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object');

function compare(a, b) {
  const rows = [];
  for (const path of new Set([...a.keys(), ...b.keys()])) {
    const [x, y] = [a.get(path), b.get(path)];
    if (text(x) === text(y)) continue;
    const row = { path, a: x, b: y, change: x === undefined ? 'added' : y === undefined ? 'removed' : 'changed' };
    if (scalars(x) && scalars(y)) {
      const [xs, ys] = [new Set(x.map(text)), new Set(y.map(text))];
      row.items = { added: y.filter((v) => !xs.has(text(v))), removed: x.filter((v) => !ys.has(text(v))) };
    }
    rows.push(row);
  }
  return rows;
}

/** The longest common subsequence of two lists of ids, as a set: the ids that kept their order. */
function keptOrder(a, b) {
  const len = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) len[i][j] = a[i] === b[j] ? len[i + 1][j + 1] + 1 : Math.max(len[i + 1][j], len[i][j + 1]);
  }
  const kept = new Set();
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) { kept.add(a[i]); i++; j++; } else if (len[i + 1][j] >= len[i][j + 1]) i++; else j++;
  }
  return kept;
}

/** The scenario's fields that differ (an object's field by field), and its rules (by id, else position) added, removed or changed field by field. */
export function diffInputs(before, after) {
  const { queryConfigurations: ra = [], ...fa } = before ?? {};
  const { queryConfigurations: rb = [], ...fb } = after ?? {};
  const fields = compare(leaves(fa), leaves(fb));
  const byId = (list) => new Map((Array.isArray(list) ? list : []).map((rule, i) => [typeof rule?.id === 'string' ? rule.id : `#${i + 1}`, { rule, position: i + 1 }]));
  const [A, B] = [byId(ra), byId(rb)];
  // Moved: a rule both have that is outside the longest run of them kept in order (one added or removed moves none).
  const common = (m, other) => [...m.keys()].filter((id) => other.has(id));
  const kept = keptOrder(common(A, B), common(B, A));
  const rules = [];
  let unchangedRules = 0;
  for (const id of new Set([...A.keys(), ...B.keys()])) {
    const [x, y] = [A.get(id), B.get(id)];
    const rows = compare(x ? leaves(x.rule) : new Map(), y ? leaves(y.rule) : new Map()).filter((r) => r.path !== 'id');
    if (x && y && !kept.has(id)) rows.push({ path: 'position', a: x.position, b: y.position, change: 'moved' });
    if (x && y && rows.length === 0) { unchangedRules += 1; continue; }
    rules.push({ id, change: !x ? 'added' : !y ? 'removed' : 'changed', rows });
  }
  return { fields, rules, unchangedRules };
}

export function summarize(diff) {
  const parts = [
    ...diff.fields.map((f) => `${f.path} ${f.change}`),
    ...diff.rules.map((r) => `rule ${r.id} ${r.change}${r.change === 'changed' ? ` (${r.rows.map((x) => x.path).join(', ')})` : ''}`),
  ];
  return parts.length === 0 ? 'No change to the scenario\'s fields or rules' : parts.join('; ');
}

/** A value as the diff shows it: JSON (so "18" and 18 differ), or a word for a side that lacks it. */
export const shown = (v) => (v === undefined ? '(absent)' : JSON.stringify(v));
