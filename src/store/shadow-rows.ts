/** Shadow runs: the same SQL in both databases but for reading each comparison's rules (JSON text). */
import type { ShadowComparison, ShadowRuleCount, ShadowRun, ShadowRunPage, ShadowSkip } from './types.js';

export const SHADOW_HEAD = 'SELECT shadow_revision AS shadow FROM scenarios WHERE seq = $1';
export const REVISION_STATE = 'SELECT state FROM scenario_revisions WHERE scenario_seq = $1 AND revision = $2';
export const SET_SHADOW = 'UPDATE scenarios SET shadow_revision = $2 WHERE seq = $1';
/** A run started again resumes its counts; its first start is kept. */
export const START_RUN = `INSERT INTO shadow_runs (scenario_seq, revision, started_at, started_by) VALUES ($1, $2, $3, $4)
  ON CONFLICT (scenario_seq, revision) DO UPDATE SET stopped_at = NULL`;
export const CLEAR_SHADOW = 'UPDATE scenarios SET shadow_revision = NULL WHERE seq = $1 AND shadow_revision = $2';
export const STOP_RUN = 'UPDATE shadow_runs SET stopped_at = $3 WHERE scenario_seq = $1 AND revision = $2 AND stopped_at IS NULL';
export const RUN = `SELECT started_at, started_by, stopped_at, skipped, compared, flipped, undecided FROM shadow_runs
  WHERE scenario_seq = $1 AND revision = $2`;
export const RUN_EXISTS = 'SELECT 1 AS found FROM shadow_runs WHERE scenario_seq = $1 AND revision = $2';
export const BY_RULE = `SELECT rule_id AS id, live, shadow, n FROM shadow_rule_counts WHERE scenario_seq = $1 AND revision = $2 AND n > 0
  ORDER BY 1, 2, 3`;
export const FLIPPED = `SELECT seq, execution_id FROM shadow_comparisons WHERE scenario_seq = $1 AND revision = $2 AND flipped = 1 AND seq > $3
  ORDER BY seq LIMIT $4`;
export const COUNTED = `UPDATE shadow_runs SET compared = compared + $3, flipped = flipped + $4, undecided = undecided + $5,
  skipped = skipped + $6 WHERE scenario_seq = $1 AND revision = $2`;
export const RULE_COUNTED = `INSERT INTO shadow_rule_counts (scenario_seq, revision, rule_id, live, shadow, n) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (scenario_seq, revision, rule_id, live, shadow) DO UPDATE SET n = shadow_rule_counts.n + excluded.n`;
export const PURGE_COMPARISONS = 'DELETE FROM shadow_comparisons WHERE created_at < $1';
/** The comparisons the purge takes, as `gone`: SQLite reads them before the delete, PostgreSQL from its RETURNING. */
export const PURGED_COLUMNS = 'scenario_seq, revision, flipped, undecided, rules';
export const PURGED_COMPARISONS = `SELECT ${PURGED_COLUMNS} FROM shadow_comparisons WHERE created_at < $1`;

/** The purge's comparisons (`gone`) subtracted from the run counters, grouped. */
export const uncountRunsSql = (gone: string) => `UPDATE shadow_runs SET compared = shadow_runs.compared - d.n,
  flipped = shadow_runs.flipped - d.f, undecided = shadow_runs.undecided - d.u
  FROM (SELECT scenario_seq, revision, count(*) AS n, sum(flipped) AS f, sum(undecided) AS u FROM ${gone} GROUP BY 1, 2) d
  WHERE shadow_runs.scenario_seq = d.scenario_seq AND shadow_runs.revision = d.revision`;

/** The same from the rule counts; `rules`/`field` as in the migration's fold. */
export const uncountRulesSql = (gone: string, rules: string, field: (name: string) => string) => `UPDATE shadow_rule_counts
  SET n = shadow_rule_counts.n - d.n
  FROM (SELECT c.scenario_seq, c.revision, ${field('id')} AS rule_id, COALESCE(${field('live')}, '') AS live,
    COALESCE(${field('shadow')}, '') AS shadow, count(*) AS n FROM ${gone} c, ${rules} GROUP BY 1, 2, 3, 4, 5) d
  WHERE shadow_rule_counts.scenario_seq = d.scenario_seq AND shadow_rule_counts.revision = d.revision
    AND shadow_rule_counts.rule_id = d.rule_id AND shadow_rule_counts.live = d.live AND shadow_rule_counts.shadow = d.shadow`;

export const SQLITE_RULES = ['json_each(c.rules) r', (name: string) => `json_extract(r.value, '$.${name}')`] as const;
export const PG_RULES = ['jsonb_array_elements(c.rules::jsonb) r', (name: string) => `r->>'${name}'`] as const;

export const insertComparisonsSql = (rows: number, placeholder: (k: number) => string) =>
  `INSERT INTO shadow_comparisons (scenario_seq, revision, execution_id, created_at, flipped, undecided, rules) VALUES ${
    Array.from({ length: rows }, (_, r) => `(${Array.from({ length: 7 }, (_, k) => placeholder(r * 7 + k)).join(', ')})`).join(', ')}`;

export const comparisonValues = (c: ShadowComparison) =>
  [c.incarnation, c.revision, c.executionId, c.createdAt, c.flipped ? 1 : 0, c.undecided ? 1 : 0, JSON.stringify(c.rules)];

type RunCounts = [incarnation: number, revision: number, compared: number, flipped: number, undecided: number, skipped: number];

/**
 * A batch's increments: COUNTED's and RULE_COUNTED's values, one row per run and per (rule, live, shadow), each list
 * in one order (by key), so two instances' batches lock the same rows in the same order.
 */
export function batchCounts(comparisons: readonly ShadowComparison[], skips: readonly ShadowSkip[]): { runs: unknown[][]; rules: unknown[][] } {
  const runs = new Map<string, RunCounts>();
  const rules = new Map<string, [number, number, string, string, string, number]>();
  const runOf = (incarnation: number, revision: number) => {
    const key = `${incarnation}:${revision}`;
    return runs.get(key) ?? runs.set(key, [incarnation, revision, 0, 0, 0, 0]).get(key)!;
  };
  for (const s of skips) runOf(s.incarnation, s.revision)[5] += s.count;
  for (const c of comparisons) {
    const key = `${c.incarnation}:${c.revision}`;
    const run = runOf(c.incarnation, c.revision);
    run[2]++;
    if (c.flipped) run[3]++;
    if (c.undecided) run[4]++;
    for (const r of c.rules) {
      const ruleKey = JSON.stringify([key, r.id, r.live, r.shadow]);
      const row = rules.get(ruleKey) ?? rules.set(ruleKey, [c.incarnation, c.revision, r.id, r.live ?? '', r.shadow ?? '', 0]).get(ruleKey)!;
      row[5]++;
    }
  }
  const sorted = <T extends unknown[]>(rows: Map<string, T>, keyed: number) =>
    [...rows.values()].sort((a, b) => compareKeys(a.slice(0, keyed), b.slice(0, keyed)));
  return { runs: sorted(runs, 2), rules: sorted(rules, 5) };
}

type RuleRow = { id: string; live: string | null; shadow: string | null; n: number | string };
export interface RunRow {
  started_at: string; started_by: string | null; stopped_at: string | null;
  skipped: number | string; compared: number | string; flipped: number | string; undecided: number | string;
}

export function shadowRun(run: RunRow, rows: readonly RuleRow[]): ShadowRun {
  const rules = rows.map((r) => ({ ...r, live: r.live || null, shadow: r.shadow || null }));
  const byRule = new Map<string, ShadowRuleCount>();
  for (const { id, live, shadow, n } of rules) {
    let rule = byRule.get(id);
    if (!rule) byRule.set(id, (rule = { ruleId: id, compared: 0, differs: 0, changes: [] }));
    rule.compared += Number(n);
    if (live === shadow) continue;
    rule.differs += Number(n);
    rule.changes.push({ live: live as ShadowRuleCount['changes'][number]['live'], shadow: shadow as ShadowRuleCount['changes'][number]['shadow'], count: Number(n) });
  }
  return {
    startedAt: run.started_at, startedBy: run.started_by, stoppedAt: run.stopped_at, active: run.stopped_at === null,
    compared: Number(run.compared), flipped: Number(run.flipped), undecided: Number(run.undecided), skipped: Number(run.skipped),
    byRule: [...byRule.values()],
  };
}

export function flippedPage(run: ShadowRun, rows: readonly { seq: number | string; execution_id: string }[], limit: number): ShadowRunPage {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { ...run, flippedExecutions: items.map((r) => r.execution_id), ...(rows.length > limit && last && { next: Number(last.seq) }) };
}

function compareKeys(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as string | number;
    const y = b[i] as string | number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
