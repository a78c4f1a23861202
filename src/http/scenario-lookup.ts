/**
 * Finding a scenario for a caller, shared by the scenario routes and execute (route modules import no route module):
 * the project query parameter, and the lookup within the caller's projects.
 */
import { Type } from '@sinclair/typebox';
import type { ProjectScope, ScenarioRow, ScenarioStore } from '../store/types.js';
import type { Principal } from './auth.js';
import { ScenarioAmbiguous, ScenarioNotFound } from './errors.js';
import { canSee, narrowScope } from './tenancy.js';

/** Ids are unique per project: a token holding several projects (or an operator) names the one it means. */
export const ProjectQuery = Type.Object({
  projectId: Type.Optional(Type.String({
    maxLength: 128,
    description:
      'The project of the scenario, for a token that holds several projects where more than one has a scenario with ' +
      'this id (409 SCS_SCENARIO_AMBIGUOUS otherwise). Empty: the scenario without a project (operator tokens). A ' +
      'project the token does not hold finds nothing (404).',
  })),
}, { additionalProperties: false });

/**
 * The one scenario with this id in the request's projects. Ids are unique per project: another project's scenario is
 * not found (404, its existence not revealed), and an id in two of the token's projects is a 409 naming them.
 */
export function findScenario(
  store: ScenarioStore, principal: Principal | undefined, projectId: string | undefined, id: string,
): Promise<ScenarioRow> {
  return findScenarioIn(store, principal, narrowScope(principal, projectId).projects, id);
}

/** findScenario in projects the caller has narrowed already (execute holds them from its head read). */
export async function findScenarioIn(
  store: ScenarioStore, principal: Principal | undefined, projects: ProjectScope, id: string,
): Promise<ScenarioRow> {
  const rows = await store.find(id, projects);
  const row = rows[0];
  if (row === undefined || !canSee(principal, row.input.projectId)) throw new ScenarioNotFound(id);
  if (rows.length > 1) throw new ScenarioAmbiguous(id, rows.map((r) => r.input.projectId ?? '(no project)').join(', '));
  return row;
}
