/**
 * No revision lost across a kill -9: the built service takes a burst of PATCHes of one scenario and is killed in the
 * middle of it. Every PATCH it acknowledged, and every revision the scenario reached, has its revision kept.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Store } from '../src/store/types.js';
import { scenario, tempDir } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';
import { build, call, killAll, start } from './server-process.js';

const TOKEN = 'durability-token-0123456789';
const IN_FLIGHT = 8;
const ACKED_BEFORE_KILL = 60;
const schema = freshSchema('revisions_kill');

afterAll(async () => {
  killAll();
  if (pgAvailable) await dropSchema(schema);
});

describe.each([
  ['SQLite', () => {
    const dir = tempDir();
    return { env: { DATA_DIR: dir }, open: async () => openSqliteStore({ file: path.join(dir, 'scenarios.db'), synchronous: 'NORMAL' }) };
  }, true],
  ['PostgreSQL', () => ({ env: { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema }, open: () => openPostgresStore({ url: PG_URL, schema }) }), pgAvailable],
] as const)('revisions across a kill -9 (%s)', (_name, setup, available) => {
  it.skipIf(!available)('keeps the revision of every committed PATCH of a burst the kill cut short', async () => {
    build();
    const { env, open } = setup();
    const server = await start({ API_TOKENS: TOKEN, ...env });
    expect((await call(server, TOKEN, 'POST', '/compliance/scenarios', { id: 'burst', input: scenario() })).status).toBe(201);
    const acked: number[] = [];
    let killed = false;
    const writer = async (w: number) => {
      for (let k = 0; !killed; k++) {
        try {
          const res = await call(server, TOKEN, 'PATCH', '/compliance/scenarios/burst', { input: { description: `writer ${w}, patch ${k}` } });
          if (res.status !== 200) continue;
          acked.push(Number(/^"\d+\.(\d+)"$/.exec(res.headers.get('etag') ?? '')?.[1]));
        } catch {
          return; // the connection died with the process
        }
        if (acked.length >= ACKED_BEFORE_KILL && !killed) {
          killed = true;
          server.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, (_, w) => writer(w)));
    await server.exited;
    expect(acked.length).toBeGreaterThanOrEqual(ACKED_BEFORE_KILL);

    const store: Store = await open();
    try {
      const [row] = await store.find('burst', undefined);
      expect(row).toBeDefined();
      const kept: number[] = [];
      let after: number | undefined;
      for (;;) {
        const page = await store.listRevisions(row!.seq, 100, after);
        kept.push(...page.items.map((r) => r.revision));
        if (page.next === undefined) break;
        after = page.next;
      }
      expect(kept).toEqual(Array.from({ length: row!.revision }, (_, k) => k + 1));
      expect(Math.max(...acked)).toBeLessThanOrEqual(row!.revision);
      const last = await store.getRevision(row!.seq, row!.revision);
      expect(JSON.parse(last!.content)).toMatchObject({ revision: row!.revision, input: row!.input });
    } finally {
      await store.close();
    }
  }, 180_000);
});
