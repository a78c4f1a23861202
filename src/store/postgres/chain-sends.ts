import { CHAIN_SEND_COLUMNS, chainSendOf, chainSendValues, replacedFrom, type ChainSendRow } from '../chain-send-rows.js';
import { OPEN_SEND_STATES, type ChainSend, type ChainSendRepository } from '../types.js';
import { placeholders, type PostgresDatabase } from './database.js';
import { inTransaction } from './revisions.js';

const INSERT = `INSERT INTO chain_sends (${CHAIN_SEND_COLUMNS}) VALUES (${placeholders(12)})`;

/** The (chain, sender) row is locked FOR UPDATE while a send takes its nonce: one sender at a time across instances. */
export function postgresChainSends(db: PostgresDatabase): ChainSendRepository {
  const { pool, query, storage } = db;
  const transaction = <T>(fn: (q: PostgresDatabase['query']) => Promise<T>) =>
    inTransaction(db, (client) => fn((text, values) => client.query(text, values)));

  return {
    reserveSend: (send, chainNonce, duplicate, minedSince) => transaction(async (q) => {
      await q('INSERT INTO chain_senders (chain, sender, next_nonce) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING', [send.chain, send.sender]);
      const { rows } = await q<{ next_nonce: string }>('SELECT next_nonce FROM chain_senders WHERE chain = $1 AND sender = $2 FOR UPDATE', [send.chain, send.sender]);
      if (duplicate !== undefined) {
        const open = await q<ChainSendRow>(
          `SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE chain = $1 AND sender = $2 AND (state = ANY($3) OR (state = 'mined' AND updated_at >= $4))`,
          [send.chain, send.sender, OPEN_SEND_STATES, minedSince ?? null],
        );
        const found = open.rows.map(chainSendOf).find(duplicate);
        if (found !== undefined) return found;
      }
      const nonce = Math.max(Number(rows[0]?.next_nonce ?? 0), chainNonce);
      await q('UPDATE chain_senders SET next_nonce = $3 WHERE chain = $1 AND sender = $2', [send.chain, send.sender, nonce + 1]);
      const row: ChainSend = { ...send, nonce, raw: null, txHash: null, state: 'reserved', replaces: null, updatedAt: send.createdAt };
      await q(INSERT, [...chainSendValues(row)]);
      return row;
    }),
    async signSend(id, raw, txHash, at) {
      await storage.write(() => pool.query("UPDATE chain_sends SET raw = $1, tx_hash = $2, state = 'signed', updated_at = $3 WHERE id = $4", [raw, txHash, at, id]));
    },
    async moveSend(id, from, to, at) {
      const r = await storage.write(() => pool.query('UPDATE chain_sends SET state = $1, updated_at = $2 WHERE id = $3 AND state = ANY($4)', [to, at, id, from]));
      return (r.rowCount ?? 0) > 0;
    },
    replaceSend: (replacedId, replacement, outcome = 'replaced') => transaction(async (q) => {
      const moved = await q('UPDATE chain_sends SET state = $3, updated_at = $2 WHERE id = $1 AND state = ANY($4)',
        [replacedId, replacement.createdAt, outcome, replacedFrom(outcome)]);
      if ((moved.rowCount ?? 0) === 0) return false;
      await q(INSERT, [...chainSendValues(replacement)]);
      return true;
    }),
    async openSends() {
      const { rows } = await query<ChainSendRow>(
        `SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE state = ANY($1) ORDER BY chain, sender, nonce, created_at`, [OPEN_SEND_STATES],
      );
      return rows.map(chainSendOf);
    },
    async sendsWithHashes(chain, hashes) {
      if (hashes.length === 0) return [];
      const { rows } = await query<ChainSendRow>(`SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE chain = $1 AND tx_hash = ANY($2)`, [chain, [...hashes]]);
      return rows.map(chainSendOf);
    },
  };
}
