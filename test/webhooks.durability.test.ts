/**
 * The webhook durability goal at a small size: bench/webhooks-durability.mjs with 60 executions and one kill -9 of
 * the built service (dist/server.js) mid-run, against a receiver that fails every third delivery. Every acknowledged
 * execution's event must reach the receiver (at least once: duplicates are allowed, and counted by webhook-id).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PG_URL, pgAvailable } from './pg.js';

const run = promisify(execFile);

describe.each([
  ['SQLite', {}, true],
  ['PostgreSQL', { DATABASE_URL: PG_URL }, pgAvailable],
] as const)('webhook durability (%s)', (_name, storeEnv, available) => {
  it.skipIf(!available)('loses no event of 60 executions across a kill -9, with a receiver failing a third of the deliveries', async () => {
    const { PATH } = process.env;
    const { stdout } = await run(process.execPath, ['bench/webhooks-durability.mjs'], {
      env: { PATH, EXECUTIONS: '60', KILLS: '1', ...storeEnv },
      timeout: 150_000,
    });
    const line = /WEBHOOKS_DURABILITY (\{.*\})/.exec(stdout)?.[1];
    expect(line, stdout).toBeDefined();
    const result = JSON.parse(line!);
    expect(result.sent).toBeGreaterThan(0);
    expect(result).toMatchObject({ kills: 1, lost: 0, badSignatures: 0, received: result.sent });
    // The receiver did refuse deliveries: the retries were exercised.
    expect(result.refusedByReceiver).toBeGreaterThan(0);
  }, 180_000);
});
