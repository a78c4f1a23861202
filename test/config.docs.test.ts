import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_SECTIONS, configSchema } from '../src/config.js';
import { configTable, TABLE_END, TABLE_START, withConfigTable } from '../src/config/docs.js';

const readme = fs.readFileSync('README.md', 'utf8');

describe('README configuration table', () => {
  it('is what the schemas write (run `npm run docs:config` after changing a variable)', () => {
    const start = readme.indexOf(TABLE_START);
    const end = readme.indexOf(TABLE_END);
    expect(start).toBeGreaterThan(0);
    expect(readme.slice(start + TABLE_START.length, end)).toBe(`\n${configTable(CONFIG_SECTIONS)}\n`);
    expect(withConfigTable(readme, configTable(CONFIG_SECTIONS))).toBe(readme);
  });

  it('has one row per variable, nowhere else in README', () => {
    const table = configTable(CONFIG_SECTIONS);
    for (const name of Object.keys(configSchema.properties)) {
      expect(table.split('\n').filter((line) => line.startsWith(`| \`${name}\` |`)), name).toHaveLength(1);
    }
    const outside = readme.slice(0, readme.indexOf(TABLE_START)) + readme.slice(readme.indexOf(TABLE_END));
    expect(outside).not.toMatch(/^\| `[A-Z_]+` \|/m);
  });

  it('is replaced between the markers only', () => {
    const doc = `# T\n\n${TABLE_START}\nold\n${TABLE_END}\n\nafter\n`;
    expect(withConfigTable(doc, 'new')).toBe(`# T\n\n${TABLE_START}\nnew\n${TABLE_END}\n\nafter\n`);
    expect(() => withConfigTable('# no markers', 'new')).toThrow(/markers/);
  });
});
