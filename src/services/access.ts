/** Tenancy: a caller reaches its projects; an operator ('*') all, and only it the project-less. */
import type { ProjectScope } from '../store/types.js';

export interface Access {
  readonly projects: ProjectScope;
  /** Equal for equal `projects`. */
  readonly key: string;
  sees(projectId: string | null | undefined): boolean;
}

export type Holding = '*' | ReadonlySet<string>;

interface Scope { projects: ProjectScope; key: string }

const NO_SCOPE: Scope = { projects: [], key: '[]' };
const EVERY_PROJECT: Scope = { projects: undefined, key: '*' };
const scopes = new WeakMap<ReadonlySet<string>, Scope>();

function scopeOf(holding: Holding | undefined): Scope {
  if (holding === undefined) return NO_SCOPE;
  if (holding === '*') return EVERY_PROJECT;
  let scope = scopes.get(holding);
  if (!scope) {
    const projects = [...holding].sort();
    scopes.set(holding, (scope = { projects, key: JSON.stringify(projects) }));
  }
  return scope;
}

const holds = (holding: Holding | undefined, projectId: string | null | undefined) =>
  holding === '*' || (holding !== undefined && projectId != null && holding.has(projectId));

/** Narrowed to `projectId` when named: that project if held, else none ('' is project-less). */
export function accessFor(holding: Holding | undefined, projectId?: string): Access {
  const scope = scopeOf(holding);
  const sees = (p: string | null | undefined) => holds(holding, p);
  if (projectId === undefined) return { ...scope, sees };
  const held = scope.projects === undefined || (projectId !== '' && scope.projects.includes(projectId));
  const projects = held ? [projectId] : [];
  return { projects, key: JSON.stringify(projects), sees };
}
