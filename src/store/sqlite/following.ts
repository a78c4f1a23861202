import type Database from 'better-sqlite3';
import type { DeploymentFollowing } from '../types.js';
import { SCENARIO_COLUMNS, type ScenarioColumns } from '../rows.js';
import { read, type Transactional } from './database.js';

/**
 * Whether a scenario has something for the chain follower, on the text JSON.stringify wrote (no spaces): the predicate
 * of a partial index (migration 17). A rule's text cannot match, as its quotes are escaped; a superset is harmless.
 */
export const SQLITE_FOLLOWED = '(instr(input, \'"status":"TxPosted"\') > 0 OR instr(input, \'"status":"DeploymentStarted"\') > 0)';

export function sqliteFollowing(db: Database.Database, write: Transactional): DeploymentFollowing {
  const followed = db.prepare<[number, number], ScenarioColumns<string, string>>(
    `SELECT ${SCENARIO_COLUMNS} FROM scenarios WHERE ${SQLITE_FOLLOWED} AND seq > ? ORDER BY seq LIMIT ?`,
  );
  // The database's clock, as toISOString writes it (the text column compares in time order).
  const hold = db.prepare<[string, string, number], { holder: string }>(
    `INSERT INTO service_leases (name, holder, expires_at)
     VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('%+.3f seconds', ? / 1000.0)))
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
     WHERE service_leases.holder = excluded.holder OR service_leases.expires_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now') RETURNING holder`,
  );
  const release = db.prepare<[string, string]>('DELETE FROM service_leases WHERE name = ? AND holder = ?');
  const holdTx = write((name: string, holder: string, ttlMs: number) => hold.get(name, holder, ttlMs) !== undefined);
  const releaseTx = write((name: string, holder: string) => release.run(name, holder));
  return {
    async scenariosToFollow(after, limit) {
      return followed.all(after, limit).map(read.scenario);
    },
    holdLease: (name, holder, ttlMs) => holdTx(name, holder, ttlMs),
    async releaseLease(name, holder) {
      await releaseTx(name, holder);
    },
  };
}
