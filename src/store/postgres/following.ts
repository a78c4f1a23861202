import type { DeploymentFollowing } from '../types.js';
import { SCENARIO_COLUMNS, type ScenarioColumns } from '../rows.js';
import { read, type PostgresDatabase } from './database.js';

/** The predicate of the partial index of migration 17: a TxPosted transaction or a DeploymentStarted deployment. */
export const PG_FOLLOWED = `(jsonb_path_exists(input, '$.smartContractDeployments[*].transactions[*] ? (@.status == "TxPosted")')
  OR jsonb_path_exists(input, '$.smartContractDeployments[*] ? (@.status == "DeploymentStarted")'))`;

export function postgresFollowing({ query, write }: PostgresDatabase): DeploymentFollowing {
  return {
    async scenariosToFollow(after, limit) {
      const { rows } = await query<ScenarioColumns<unknown, Date>>(
        `SELECT ${SCENARIO_COLUMNS} FROM scenarios WHERE ${PG_FOLLOWED} AND seq > $1 ORDER BY seq LIMIT $2`, [after, limit],
      );
      return rows.map(read.scenario);
    },
    async holdLease(name, holder, ttlMs) {
      // The database's clock, not the instances': theirs may disagree.
      const { rows } = await write(
        `INSERT INTO service_leases (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE service_leases.holder = excluded.holder OR service_leases.expires_at < now() RETURNING holder`,
        [name, holder, ttlMs],
      );
      return rows.length > 0;
    },
    async releaseLease(name, holder) {
      await write('DELETE FROM service_leases WHERE name = $1 AND holder = $2', [name, holder]);
    },
  };
}
