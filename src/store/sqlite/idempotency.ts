import type Database from 'better-sqlite3';
import type { IdempotencyRepository } from '../types.js';
import type { Transactional } from './database.js';

export function sqliteIdempotency(db: Database.Database, write: Transactional): IdempotencyRepository {
  // A claim without a lease dates from before leases: its owner is gone (the service was restarted since).
  const freeExpiredKey = db.prepare<[string, string, string]>(
    'DELETE FROM idempotency_keys WHERE key = ? AND (created_at < ? OR (status IS NULL AND (lease_until IS NULL OR lease_until < ?)))',
  );
  const claimKey = db.prepare<[string, string, string, string]>(
    'INSERT INTO idempotency_keys (key, request_hash, created_at, lease_until) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING',
  );
  const renewKey = db.prepare<[string, string]>('UPDATE idempotency_keys SET lease_until = ? WHERE key = ? AND status IS NULL');
  const selectKey = db.prepare<[string], { request_hash: string; status: number | null; headers: string | null; body: string | null }>(
    'SELECT request_hash, status, headers, body FROM idempotency_keys WHERE key = ?',
  );
  const completeKey = db.prepare<[number, string, string, string]>('UPDATE idempotency_keys SET status = ?, headers = ?, body = ? WHERE key = ?');
  const releaseKey = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE key = ? AND status IS NULL');
  const purgeKeys = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE created_at < ?');

  const claim = write((key: string, requestHash: string, now: string, expiredBefore: string, leaseUntil: string) => {
    freeExpiredKey.run(key, expiredBefore, now);
    if (claimKey.run(key, requestHash, now, leaseUntil).changes > 0) return { claimed: true as const };
    const row = selectKey.get(key);
    if (row === undefined) throw new Error('idempotency_keys: the row the claim conflicted with is missing');
    return {
      claimed: false as const,
      requestHash: row.request_hash,
      // completeKey sets status, headers and body together
      response: row.status === null || row.headers === null || row.body === null
        ? undefined
        : { status: row.status, headers: JSON.parse(row.headers), body: row.body },
    };
  });
  const completeKeyTx = write((...args: Parameters<typeof completeKey.run>) => completeKey.run(...args));
  const releaseKeyTx = write((key: string) => releaseKey.run(key));
  const purgeKeysTx = write((createdBefore: string) => purgeKeys.run(createdBefore));
  const renewKeyTx = write((leaseUntil: string, key: string) => renewKey.run(leaseUntil, key));

  return {
    async claimIdempotencyKey(key, requestHash, now, expiredBefore, leaseUntil) {
      return claim(key, requestHash, now, expiredBefore, leaseUntil);
    },
    async renewIdempotencyLease(key, leaseUntil) {
      await renewKeyTx(leaseUntil, key);
    },
    async completeIdempotencyKey(key, response) {
      await completeKeyTx(response.status, JSON.stringify(response.headers), response.body, key);
    },
    async releaseIdempotencyKey(key) {
      await releaseKeyTx(key);
    },
    async purgeIdempotencyKeys(createdBefore) {
      return (await purgeKeysTx(createdBefore)).changes;
    },
  };
}
