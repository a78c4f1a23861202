import type { TObject, TSchema } from '@sinclair/typebox';
import { expectation } from './variables.js';

export const TABLE_START = '<!-- config-table:start -->';
export const TABLE_END = '<!-- config-table:end -->';

export interface ConfigSection {
  title: string;
  source: string;
  schema: TObject;
}

const code = (s: string) => `\`${s}\``;

function cell(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** What the schema says where it can, else the variable's own words, else "unset". */
function defaultOf(variable: TSchema): string {
  if (typeof variable.docDefault === 'string') return variable.docDefault;
  if (variable.default !== undefined) return code(String(variable.default));
  return 'unset';
}

function rows(schema: TObject): string[] {
  return Object.entries(schema.properties).map(([name, variable]) =>
    `| ${code(name)} | ${cell(defaultOf(variable))} | ${cell(expectation(variable, code))} | ${cell(String(variable.description ?? ''))} |`);
}

export function configTable(sections: readonly ConfigSection[]): string {
  const parts = sections.map((s) => [
    `**${s.title}** (${code(s.source)})`,
    '',
    '| Variable | Default | Values | Meaning |',
    '|---|---|---|---|',
    ...rows(s.schema),
  ].join('\n'));
  return ['<!-- Written by `npm run docs:config` from the schemas named below: edit those, then run it. -->', ...parts].join('\n\n');
}

export function withConfigTable(readme: string, table: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the document has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${readme.slice(0, start + TABLE_START.length)}\n${table}\n${readme.slice(end)}`;
}
