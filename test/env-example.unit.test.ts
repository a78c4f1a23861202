/**
 * .env.example lists every variable of docs/configuration.md (itself written from the config schemas), under its
 * group, and nothing else: a variable added to a schema and its docs fails here until .env.example has it too.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';

const docs = fs.readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
const example = fs.readFileSync(new URL('../.env.example', import.meta.url), 'utf8');

/** Group name -> its variables, in order, from the headings and table rows of a text. */
function groups(text: string, heading: RegExp, row: RegExp): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const h = heading.exec(line);
    if (h) out.set(h[1]!, current = []);
    const r = row.exec(line);
    if (r) current!.push(r[1]!);
  }
  return out;
}

it('lists every variable of docs/configuration.md under its group, and no other', () => {
  const documented = groups(docs, /^\*\*(.+?)\*\* \(`/, /^\| `([A-Z][A-Z0-9_]*)` \|/);
  const listed = groups(example, /^# ---- (.+?) \(src\//, /^#? ?([A-Z][A-Z0-9_]*)=/);
  expect([...documented.values()].flat().length).toBeGreaterThan(50);
  expect(listed).toEqual(documented);
});
