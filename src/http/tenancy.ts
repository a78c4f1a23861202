import type { FastifyRequest } from 'fastify';
import type { ProjectScope } from '../store/types.js';
import type { Principal } from './auth.js';
import { storableText } from '../domain/storable-text.js';
import type { Access } from '../services/scenarios.js';
import { ValidationFailed } from './errors.js';

/**
 * Tenancy: a token sees the scenarios (and their executions) of its projects; operator tokens ('*') see all,
 * and only they see scenarios without a project.
 */
export function canSee(principal: Principal | undefined, projectId: string | null | undefined): boolean {
  if (!principal) return false;
  if (principal.projects === '*') return true;
  return projectId != null && principal.projects.has(projectId);
}

/** The projects a request may see: undefined = every project (operator), else the token's projects (none without one). */
export function projectFilter(request: FastifyRequest): ProjectScope {
  return scopeOf(request.principal).projects;
}

/** A principal's projects as a store scope, and a key equal for equal scopes (remembered per principal). */
export function scopeOf(principal: Principal | undefined): { projects: ProjectScope; key: string } {
  if (!principal) return NO_SCOPE;
  let scope = scopes.get(principal);
  if (!scope) {
    const projects = principal.projects === '*' ? undefined : [...principal.projects].sort();
    scope = { projects, key: projects === undefined ? '*' : JSON.stringify(projects) };
    scopes.set(principal, scope);
  }
  return scope;
}

/**
 * The scope of a request that names a project (`?projectId=`): that project when the token holds it, else nothing
 * (as for an unknown project). An empty value is the scenarios without a project, which only operator tokens see.
 */
function narrowScope(principal: Principal | undefined, projectId: string | undefined): { projects: ProjectScope; key: string } {
  const scope = scopeOf(principal);
  if (projectId === undefined) return scope;
  // It reaches the database (an operator's scope): the same rule as for every stored text.
  if (!storableText(projectId)) {
    throw new ValidationFailed([{ field: 'querystring.projectId', pointer: '/projectId', message: 'must not contain U+0000 or an unpaired UTF-16 surrogate' }]);
  }
  const held = scope.projects === undefined || (projectId !== '' && scope.projects.includes(projectId));
  const projects = held ? [projectId] : [];
  return { projects, key: JSON.stringify(projects) };
}

const NO_SCOPE: { projects: ProjectScope; key: string } = { projects: [], key: '[]' };
const scopes = new WeakMap<Principal, { projects: ProjectScope; key: string }>();

/** What a caller reaches (a service's Access): the scenarios of its projects, narrowed to `?projectId=` when it names one. */
export const accessOf = (principal: Principal | undefined, projectId?: string): Access =>
  ({ ...narrowScope(principal, projectId), sees: (p) => canSee(principal, p) });
