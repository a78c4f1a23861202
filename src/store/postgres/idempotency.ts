import type { IdempotencyRepository } from '../types.js';
import type { PostgresDatabase } from './database.js';

type KeyRow = { request_hash: string; status: number | null; headers: Record<string, string> | null; body: string | null };

export function postgresIdempotency({ query, write }: PostgresDatabase): IdempotencyRepository {
  return {
    async claimIdempotencyKey(key, requestHash, now, expiredBefore, leaseUntil) {
      // Insert-or-read; a row deleted between the two (released, expired) makes us try again. A claim whose lease ran
      // out (or without one: from before leases) lost its owner, and is free.
      for (;;) {
        await write(
          'DELETE FROM idempotency_keys WHERE key = $1 AND (created_at < $2 OR (status IS NULL AND (lease_until IS NULL OR lease_until < $3)))',
          [key, expiredBefore, now],
        );
        const inserted = await write(
          'INSERT INTO idempotency_keys (key, request_hash, created_at, lease_until) VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING RETURNING key',
          [key, requestHash, now, leaseUntil],
        );
        if (inserted.rowCount) return { claimed: true };
        const { rows } = await query<KeyRow>('SELECT request_hash, status, headers, body FROM idempotency_keys WHERE key = $1', [key]);
        const row = rows[0];
        if (!row) continue;
        return {
          claimed: false,
          requestHash: row.request_hash,
          // completeIdempotencyKey sets status, headers and body together
          response: row.status === null || row.headers === null || row.body === null
            ? undefined
            : { status: row.status, headers: row.headers, body: row.body },
        };
      }
    },
    async renewIdempotencyLease(key, leaseUntil) {
      await write('UPDATE idempotency_keys SET lease_until = $1 WHERE key = $2 AND status IS NULL', [leaseUntil, key]);
    },
    async completeIdempotencyKey(key, response) {
      await write('UPDATE idempotency_keys SET status = $1, headers = $2, body = $3 WHERE key = $4',
        [response.status, JSON.stringify(response.headers), response.body, key]);
    },
    async releaseIdempotencyKey(key) {
      await write('DELETE FROM idempotency_keys WHERE key = $1 AND status IS NULL', [key]);
    },
    async purgeIdempotencyKeys(createdBefore) {
      const { rowCount } = await write('DELETE FROM idempotency_keys WHERE created_at < $1', [createdBefore]);
      return rowCount ?? 0;
    },
  };
}
