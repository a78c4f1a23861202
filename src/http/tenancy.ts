import type { FastifyRequest } from 'fastify';
import type { Principal } from './auth.js';

/**
 * Tenancy: a token sees the scenarios (and their executions) of its projects; operator tokens ('*') see all,
 * and only they see scenarios without a project.
 */
export function canSee(principal: Principal | undefined, projectId: string | null | undefined): boolean {
  if (!principal) return false;
  if (principal.projects === '*') return true;
  return projectId != null && principal.projects.has(projectId);
}

/** The project filter for listings: undefined = every project (operator), else the token's projects. */
export function projectFilter(request: FastifyRequest): string[] | undefined {
  const projects = request.principal?.projects;
  return projects === undefined ? [] : projects === '*' ? undefined : [...projects];
}
