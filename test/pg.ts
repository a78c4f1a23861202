import pg from 'pg';

/** The PostgreSQL server the tests use: TEST_DATABASE_URL, else the local one of the README. */
export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether PostgreSQL answers. When it does not, PostgreSQL tests are skipped with a message, unless
 * REQUIRE_POSTGRES=1 (as in .ci/run), where that is a failure.
 */
async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (err) {
    if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL at ${PG_URL} does not answer: ${String(err)}`);
    process.stderr.write(`\n[skip] PostgreSQL at ${PG_URL} does not answer: PostgreSQL tests are skipped (${String(err)})\n`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export const pgAvailable = await postgresAvailable();

/** A fresh schema name for one test run, so runs never collide. */
export const freshSchema = (prefix = 't') => `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
