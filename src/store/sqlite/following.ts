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
  const hold = db.prepare<[string, string, string, string], { holder: string }>(
    `INSERT INTO service_leases (name, holder, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
     WHERE service_leases.holder = excluded.holder OR service_leases.expires_at < ? RETURNING holder`,
  );
  const release = db.prepare<[string, string]>('DELETE FROM service_leases WHERE name = ? AND holder = ?');
  const holdTx = write((name: string, holder: string, now: string, until: string) => hold.get(name, holder, until, now) !== undefined);
  const releaseTx = write((name: string, holder: string) => release.run(name, holder));
  return {
    async scenariosToFollow(after, limit) {
      return followed.all(after, limit).map(read.scenario);
    },
    holdLease: (name, holder, now, until) => holdTx(name, holder, now, until),
    async releaseLease(name, holder) {
      await releaseTx(name, holder);
    },
  };
}
