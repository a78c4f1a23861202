import type Database from 'better-sqlite3';
import type { NullifierRepository } from '../types.js';
import type { Transactional } from './database.js';

type Binding = Parameters<NullifierRepository['bindNullifier']>[0];

export function sqliteNullifiers(db: Database.Database, write: Transactional): NullifierRepository {
  const bindNullifier = db.prepare<[string, string, string, string, string]>(
    'INSERT INTO zkp_nullifiers (project_id, scenario_id, nullifier_hash, address_hash, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const boundAddress = db.prepare<[string, string, string], { address_hash: string }>(
    'SELECT address_hash FROM zkp_nullifiers WHERE project_id = ? AND scenario_id = ? AND nullifier_hash = ?',
  );
  // The insert and the read in one committed transaction: the address is returned only once the binding is durable.
  const bindNullifierTx = write((binding: Binding): string => {
    bindNullifier.run(binding.projectId, binding.scenarioId, binding.nullifierHash, binding.addressHash, binding.at);
    const row = boundAddress.get(binding.projectId, binding.scenarioId, binding.nullifierHash);
    if (row === undefined) throw new Error('zkp_nullifiers: the row just written is missing');
    return row.address_hash;
  });

  return {
    async bindNullifier(binding) {
      return bindNullifierTx(binding);
    },
  };
}
