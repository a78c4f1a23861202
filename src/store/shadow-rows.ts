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
export const RUN = 'SELECT started_at, started_by, stopped_at, skipped FROM shadow_runs WHERE scenario_seq = $1 AND revision = $2';
export const COUNTS = `SELECT count(*) AS compared, COALESCE(sum(flipped), 0) AS flipped FROM shadow_comparisons
  WHERE scenario_seq = $1 AND revision = $2`;
export const FLIPPED = `SELECT seq, execution_id FROM shadow_comparisons WHERE scenario_seq = $1 AND revision = $2 AND flipped = 1 AND seq > $3
  ORDER BY seq LIMIT $4`;
export const SKIPPED = 'UPDATE shadow_runs SET skipped = skipped + $3 WHERE scenario_seq = $1 AND revision = $2';
export const PURGE_COMPARISONS = 'DELETE FROM shadow_comparisons WHERE created_at < $1';

/** `rules(element)`: the dialect's rows of a JSON array column, as `r`. */
export const byRuleSql = (rules: string, field: (name: string) => string) => `SELECT ${field('id')} AS id, ${field('live')} AS live,
  ${field('shadow')} AS shadow, count(*) AS n FROM shadow_comparisons c, ${rules} WHERE c.scenario_seq = $1 AND c.revision = $2
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;

export const insertComparisonsSql = (rows: number, placeholder: (k: number) => string) =>
  `INSERT INTO shadow_comparisons (scenario_seq, revision, execution_id, created_at, flipped, rules) VALUES ${
    Array.from({ length: rows }, (_, r) => `(${Array.from({ length: 6 }, (_, k) => placeholder(r * 6 + k)).join(', ')})`).join(', ')}`;

export const comparisonValues = (c: ShadowComparison) =>
  [c.incarnation, c.revision, c.executionId, c.createdAt, c.flipped ? 1 : 0, JSON.stringify(c.rules)];

export const skipValues = (s: ShadowSkip) => [s.incarnation, s.revision, s.count];

type RuleRow = { id: string; live: string | null; shadow: string | null; n: number | string };
export interface RunRow { started_at: string; started_by: string | null; stopped_at: string | null; skipped: number | string }

export function shadowRun(run: RunRow, counts: { compared: number | string; flipped: number | string }, rules: readonly RuleRow[]): ShadowRun {
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
    compared: Number(counts.compared), flipped: Number(counts.flipped), skipped: Number(run.skipped), byRule: [...byRule.values()],
  };
}

export function flippedPage(run: ShadowRun, rows: readonly { seq: number | string; execution_id: string }[], limit: number): ShadowRunPage {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { ...run, flippedExecutions: items.map((r) => r.execution_id), ...(rows.length > limit && last && { next: Number(last.seq) }) };
}
