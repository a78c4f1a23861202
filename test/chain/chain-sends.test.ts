/**
 * chain_sends looked up by transaction hash, as the follower does every round for the transactions of its deployments
 * (sendsWithHashes): from an index on (chain, tx_hash) in both stores, and on SQLite in one statement whatever the
 * number of hashes.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/store/index.js';
import { tempDir } from '../helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';

const T = '2026-01-01T00:00:00.000Z';
const hash = () => `0x${randomBytes(32).toString('hex')}`;

/** Three signed sends: two on eip155:1, one on eip155:2. */
async function signedSends(store: Store): Promise<string[]> {
  const hashes: string[] = [];
  for (const [i, chain] of ['eip155:1', 'eip155:1', 'eip155:2'].entries()) {
    const send = await store.reserveSend({ id: `send-${i}`, chain, sender: '0xabc', request: '{}', purpose: '{}', createdAt: T }, 0);
    const h = hash();
    await store.signSend(send.id, '0x00', h, T);
    hashes.push(h);
  }
  return hashes;
}

describe('sendsWithHashes', () => {
  it('SQLite: an index on (chain, tx_hash); 40,000 hashes asked at once (more than SQLite\'s variables) find the chain\'s sends', async () => {
    const dir = tempDir('scs-sends-');
    const store = await openStore(loadConfig({ DATA_DIR: dir }).database);
    try {
      const hashes = await signedSends(store);
      const asked = [...Array.from({ length: 40_000 }, hash), ...hashes];
      expect((await store.sendsWithHashes('eip155:1', asked)).map((s) => s.id).sort()).toEqual(['send-0', 'send-1']);
      expect((await store.sendsWithHashes('eip155:2', [hashes[2]!])).map((s) => s.id)).toEqual(['send-2']);
      expect(await store.sendsWithHashes('eip155:2', [hashes[0]!])).toEqual([]);
    } finally {
      await store.close();
    }
    const db = new Database(path.join(dir, 'scenarios.db'), { readonly: true });
    try {
      const indexes = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'chain_sends'").all();
      const columns = indexes.map(({ name }) => db.prepare<[], { name: string }>(`PRAGMA index_info(${name})`).all().map((c) => c.name).join(','));
      expect(columns).toContain('chain,tx_hash');
    } finally {
      db.close();
    }
  });

  describe.skipIf(!pgAvailable)('PostgreSQL', () => {
    const schema = freshSchema('sends');
    afterAll(async () => dropSchema(schema));

    it('an index on (chain, tx_hash); the chain\'s sends found by hash', async () => {
      const store = await openStore(loadConfig({ DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema }).database);
      try {
        const hashes = await signedSends(store);
        expect((await store.sendsWithHashes('eip155:1', [hash(), ...hashes])).map((s) => s.id).sort()).toEqual(['send-0', 'send-1']);
      } finally {
        await store.close();
      }
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        const { rows } = await client.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, 'chain_sends']);
        expect(rows.map((r) => r.indexdef.replace(/^.* USING btree /, ''))).toContain('(chain, tx_hash)');
      } finally {
        await client.end();
      }
    });
  });
});
