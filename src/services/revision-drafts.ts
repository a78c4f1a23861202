import { contentDigest } from '../domain/canonical-json.js';
import { mergePatchOf } from '../domain/merge-patch.js';
import type { RevisionDraft, Revise, ScenarioRow } from '../store/types.js';

export interface RevisionSource {
  author: string | null;
  serialize(row: ScenarioRow): string;
}

/** `replaced` is kept too, where it was written before revisions were kept. */
export function reviseWith(source: RevisionSource, replaced?: ScenarioRow): Revise {
  const draft = (row: ScenarioRow, patch: string | null, author: string | null): RevisionDraft => ({
    revision: row.revision,
    projectId: row.input.projectId ?? null,
    content: source.serialize(row),
    digest: contentDigest(row.input),
    patch,
    author,
    createdAt: row.updatedAt,
  });
  return (row) => ({
    made: draft(row, replaced ? JSON.stringify(mergePatchOf(replaced.input, row.input)) : null, source.author),
    ...(replaced && { replaced: { revision: replaced.revision, draft: () => draft(replaced, null, null) } }),
  });
}
