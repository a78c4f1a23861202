import { setImmediate as turn } from 'node:timers/promises';
import { verdictOf } from '../domain/verdict.js';
import type { EvidenceKey, EvidenceRange, ExecutionEvidence, ExecutionExport } from '../store/types.js';
import type { Access } from './access.js';

export type { EvidenceKey };

export const EXPORT_ROWS_MAX = 100_000;
/** Records per store page and per chunk written: the most an export holds at once. */
const PAGE_ROWS = 256;

export type ExportFormat = 'ndjson' | 'csv';

export interface EvidenceExport {
  /** A store page a chunk, read only as the consumer asks for more. */
  text: AsyncIterable<string>;
  next?: EvidenceKey;
}

export const exportsOneProject = (access: Access) => access.projects === undefined || access.projects.length <= 1;

/** All (undefined), a project, the project-less (null) or nothing (false). */
function projectOf(access: Access): string | null | undefined | false {
  const { projects } = access;
  if (projects === undefined) return undefined;
  if (!exportsOneProject(access)) throw new Error('an export reads one project; name it with projectId');
  const [project] = projects;
  if (project === undefined) return false;
  if (project !== '') return project;
  return access.sees(null) ? null : false;
}

/** A period's executions within the caller's projects. */
export class EvidenceExporter {
  constructor(private readonly store: ExecutionExport) {}

  export(access: Access, range: Omit<EvidenceRange, 'project'>, limit: number, format: ExportFormat): Promise<EvidenceExport> {
    const project = projectOf(access);
    if (project === false) return Promise.resolve({ text: lines(format, none()) });
    return exportEvidence(this.store, { ...range, ...(project !== undefined && { project }) }, limit, format);
  }
}

/** Up to `limit` records; the last one's key first, for the cursor. */
async function exportEvidence(store: ExecutionExport, range: EvidenceRange, limit: number, format: ExportFormat): Promise<EvidenceExport> {
  const { key: last, more } = await store.evidenceCut(range, limit);
  return { text: lines(format, pages(store, { ...range, through: last })), ...(more && last && { next: last }) };
}

async function * none(): AsyncGenerator<ExecutionEvidence[]> {}

async function * pages(store: ExecutionExport, range: EvidenceRange): AsyncGenerator<ExecutionEvidence[]> {
  let after = range.after;
  for (;;) {
    const page = await store.evidencePage({ ...range, after }, PAGE_ROWS);
    if (page.length > 0) yield page;
    const last = page.at(-1);
    if (!last || page.length < PAGE_ROWS) return;
    after = { createdAt: last.createdAt, seq: last.seq };
    // SQLite reads synchronously and a fast reader never pushes back.
    await turn();
  }
}

async function * lines(format: ExportFormat, source: AsyncIterable<ExecutionEvidence[]>): AsyncGenerator<string> {
  if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\r\n`;
  let records = 0;
  for await (const page of source) {
    records += page.length;
    yield format === 'csv' ? page.map(csvLine).join('') : page.map(ndjsonLine).join('');
  }
  if (format === 'ndjson') yield `${JSON.stringify({ end: true, records })}\n`;
}

const evidenceView = (e: ExecutionEvidence) => ({
  executionId: e.executionId, createdAt: e.createdAt, projectId: e.projectId, scenarioId: e.scenarioId, scenarioRevision: e.scenarioRevision,
  scenarioDigest: e.scenarioDigest, address: e.address, state: e.state, verdict: verdictOf(e.rules), rules: e.rules, credentials: e.credentials,
});

const ndjsonLine = (e: ExecutionEvidence) => `${JSON.stringify(evidenceView(e))}\n`;

export const CSV_COLUMNS = [
  'executionId', 'createdAt', 'projectId', 'scenarioId', 'scenarioRevision', 'scenarioDigest', 'address', 'state', 'verdict', 'rules', 'credentials',
] as const;

function csvLine(e: ExecutionEvidence): string {
  const view = evidenceView(e);
  const cells = {
    ...view,
    scenarioRevision: String(view.scenarioRevision),
    rules: view.rules.map((r) => `${r.id}=${r.status}`).join(' '),
    credentials: view.credentials.join(' '),
  };
  return `${CSV_COLUMNS.map((column) => csvCell(cells[column] ?? '')).join(',')}\r\n`;
}

/** Spreadsheets run these as formulas, some after blanks (OWASP: CSV injection). */
const FORMULA_START = /^(?:\s*[=+\-@]|[\t\r])/;

/** RFC 4180; `;` quoted too, a separator in some locales. */
function csvCell(text: string): string {
  const cell = FORMULA_START.test(text) ? `'${text}` : text;
  return /[",;\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}
