/**
 * PostgreSQL with its storage full: SQLSTATE 53100 (disk_full) is answered as SQLite's SQLITE_FULL is, 503
 * SCS_STORAGE_FULL, readiness included, and nothing refused is acknowledged.
 * - A commit that fails: a deferred constraint trigger raises disk_full at COMMIT, after the INSERT ... RETURNING
 *   produced its row (SQLite's lost writes came from exactly that moment). Any user.
 * - A real full tablespace: the service's tables moved to a tablespace on a small tmpfs, filled by the server. Needs
 *   root (to mount) and PostgreSQL on this host (to write there); otherwise skipped with a line saying why.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { StorageFull } from '../src/store/errors.js';
import { openPostgresStore } from '../src/store/postgres.js';
import type { Scenario } from '../src/schemas/scenario.js';
import { ADDRESS, auth, credential, makeApp, scenario } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';
import { killAll, start } from './server-process.js';
import { codes, expectKept, fillFreeAndKill, mountTmpfs, serverEnv, skipped, unmount } from './storage-fill.js';

const schemas: string[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  killAll();
  for (const s of schemas) await dropSchema(s); // first: a tablespace is dropped only once empty
  for (const c of cleanups.reverse()) await c();
});

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Makes every commit that wrote to the service's tables fail with disk_full while `<schema>.full` has a row. */
async function failCommits(schema: string): Promise<void> {
  await sql(`
    CREATE TABLE ${schema}.full (yes boolean);
    CREATE FUNCTION ${schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM ${schema}.full) THEN
        RAISE EXCEPTION 'could not extend file: No space left on device (at COMMIT, by a test)' USING ERRCODE = 'disk_full';
      END IF;
      RETURN NULL;
    END $$;
    ${['scenarios', 'executions', 'idempotency_keys'].map((t) => `CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT OR UPDATE ON ${schema}.${t}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse();`).join('\n')}
  `);
}

describe.skipIf(!pgAvailable)('PostgreSQL, a commit refused with disk_full', () => {
  const schema = freshSchema('full');
  schemas.push(schema);
  let app: FastifyInstance;

  it('rejects the write with StorageFull, and keeps nothing of it', async () => {
    const store = await openPostgresStore({ url: PG_URL, schema });
    await failCommits(schema);
    const kept = await store.create('kept', scenario() as unknown as Scenario, new Date().toISOString());
    await sql(`INSERT INTO ${schema}.full VALUES (true)`);
    await expect(store.create('lost', scenario() as unknown as Scenario, new Date().toISOString())).rejects.toBeInstanceOf(StorageFull);
    await expect(store.update(kept!.seq, scenario({ name: 'Changed' }) as unknown as Scenario, 1, new Date().toISOString()))
      .rejects.toBeInstanceOf(StorageFull);
    expect(await store.find('lost', undefined)).toEqual([]);
    expect((await store.find('kept', undefined))[0]).toMatchObject({ revision: 1, input: { name: 'Adult KYC' } });
    app = await makeApp({}, { store });
  });

  it('answers 503 SCS_STORAGE_FULL to create, PATCH and execute, and on /health/ready', async () => {
    const full = (res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown }) =>
      [res.statusCode, res.headers['retry-after'], (res.json() as { code: string }).code];
    const expected = [503, '30', 'SCS_STORAGE_FULL'];
    expect(full(await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'new', input: scenario() } })))
      .toEqual(expected);
    expect(full(await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/kept', headers: { ...auth, 'if-match': '"1.1"' }, payload: { input: { name: 'Changed' } },
    }))).toEqual(expected);
    expect(full(await app.inject({
      method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [credential()], scenarioId: 'kept' },
    }))).toEqual(expected);
    expect(full(await app.inject({ method: 'GET', url: '/health/ready' }))).toEqual(expected);
  });

  it('is ready again once a commit succeeds, without a request failing first', async () => {
    await sql(`DELETE FROM ${schema}.full`);
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'new', input: scenario() } })).statusCode)
      .toBe(201);
    await app.close();
  });
});

const TABLESPACE_TEST = 'the full-tablespace PostgreSQL test (the disk_full-at-commit test runs without it)';

/** A tablespace on a fresh 2 MiB tmpfs with a 512 KiB filler file beside it, or why there is none. */
async function smallTablespace(): Promise<{ name: string; filler: string } | { skipped: string }> {
  if (!pgAvailable) return skipped(TABLESPACE_TEST, 'PostgreSQL does not answer');
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const dataDirectory = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0]!.data_directory;
    const owner = fs.statSync(dataDirectory, { throwIfNoEntry: false });
    if (!owner) return skipped(TABLESPACE_TEST, `PostgreSQL's data directory ${dataDirectory} is not on this host`);
    const mount = mountTmpfs(TABLESPACE_TEST, '2m');
    if (typeof mount !== 'string') return mount;
    cleanups.push(() => unmount(mount));
    const location = path.join(mount, 'tablespace');
    fs.mkdirSync(location, { mode: 0o700 });
    fs.chownSync(location, owner.uid, owner.gid);
    const filler = path.join(mount, 'filler');
    fs.writeFileSync(filler, randomBytes(512 * 1024));
    const name = freshSchema('ts');
    await client.query(`CREATE TABLESPACE ${name} LOCATION '${location}'`);
    cleanups.push(() => sql(`DROP TABLESPACE IF EXISTS ${name}`));
    return { name, filler };
  } catch (err) {
    return skipped(TABLESPACE_TEST, `no tablespace on a tmpfs: ${String((err as Error).message).split('\n')[0]}`);
  } finally {
    await client.end();
  }
}

const tablespace = await smallTablespace();
describe.skipIf('skipped' in tablespace)('PostgreSQL on a tablespace that fills', () => {
  it('answers 503 SCS_STORAGE_FULL, is not ready, recovers when space is freed, and keeps all it acknowledged', async () => {
    const { name, filler } = tablespace as { name: string; filler: string };
    const schema = freshSchema('fullts');
    schemas.push(schema);
    const env = { ...serverEnv, DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
    let server = await start(env);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ kind: string; name: string }>(
        "SELECT CASE c.relkind WHEN 'i' THEN 'INDEX' ELSE 'TABLE' END AS kind, c.relname AS name FROM pg_class c " +
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')", [schema]);
      for (const r of rows) await client.query(`ALTER ${r.kind} ${schema}.${r.name} SET TABLESPACE ${name}`);
    } finally {
      await client.end();
    }

    const { filled, ready, readyAgain, after } = await fillFreeAndKill(server, filler, 400);

    server = await start(env);
    await expectKept(server, filled);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(filled.etags.size).toBeGreaterThan(10);
    expect(codes(filled.refusals)).toEqual(['503 SCS_STORAGE_FULL']);
    expect(filled.refusals.length).toBeGreaterThanOrEqual(2);
    expect([ready.status, ready.body.code]).toEqual([503, 'SCS_STORAGE_FULL']);
    expect(readyAgain.status).toBe(200);
    expect(after.status).toBe(201);
  }, 120_000);
});
