import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_SECTIONS, configSchema } from '../src/config.js';
import { configTable, TABLE_END, TABLE_START, withConfigTable } from '../src/config/docs.js';

const doc = fs.readFileSync('docs/configuration.md', 'utf8');
const readme = fs.readFileSync('README.md', 'utf8');

describe('the configuration table (docs/configuration.md)', () => {
  it('is what the schemas write (run `npm run docs:config` after changing a variable)', () => {
    const start = doc.indexOf(TABLE_START);
    const end = doc.indexOf(TABLE_END);
    expect(start).toBeGreaterThan(0);
    expect(doc.slice(start + TABLE_START.length, end)).toBe(`\n${configTable(CONFIG_SECTIONS)}\n`);
    expect(withConfigTable(doc, configTable(CONFIG_SECTIONS))).toBe(doc);
  });

  it('has one row per variable, nowhere else in the document or README', () => {
    const table = configTable(CONFIG_SECTIONS);
    for (const name of Object.keys(configSchema.properties)) {
      expect(table.split('\n').filter((line) => line.startsWith(`| \`${name}\` |`)), name).toHaveLength(1);
    }
    const outside = doc.slice(0, doc.indexOf(TABLE_START)) + doc.slice(doc.indexOf(TABLE_END));
    expect(outside).not.toMatch(/^\| `[A-Z_]+` \|/m);
    expect(readme).not.toMatch(/^\| `[A-Z_]+` \|/m);
  });

  it('is replaced between the markers only', () => {
    const sample = `# T\n\n${TABLE_START}\nold\n${TABLE_END}\n\nafter\n`;
    expect(withConfigTable(sample, 'new')).toBe(`# T\n\n${TABLE_START}\nnew\n${TABLE_END}\n\nafter\n`);
    expect(() => withConfigTable('# no markers', 'new')).toThrow(/markers/);
  });
});
