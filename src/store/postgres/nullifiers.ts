import type { NullifierRepository } from '../types.js';
import type { PostgresDatabase } from './database.js';

export function postgresNullifiers({ query }: PostgresDatabase): NullifierRepository {
  return {
    async bindNullifier(binding) {
      // Rows are never deleted: the insert-or-read needs no transaction.
      await query('INSERT INTO zkp_nullifiers (project_id, scenario_id, nullifier_hash, address_hash, created_at) VALUES ($1, $2, $3, $4, $5) ' +
        'ON CONFLICT DO NOTHING', [binding.projectId, binding.scenarioId, binding.nullifierHash, binding.addressHash, binding.at]);
      const { rows } = await query<{ address_hash: string }>(
        'SELECT address_hash FROM zkp_nullifiers WHERE project_id = $1 AND scenario_id = $2 AND nullifier_hash = $3',
        [binding.projectId, binding.scenarioId, binding.nullifierHash],
      );
      const row = rows[0];
      if (row === undefined) throw new Error('zkp_nullifiers: the row just written is missing');
      return row.address_hash;
    },
  };
}
