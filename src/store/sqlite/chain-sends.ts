import type Database from 'better-sqlite3';
import { CHAIN_SEND_COLUMNS, chainSendOf, chainSendValues, replacedFrom, type ChainSendRow } from '../chain-send-rows.js';
import { OPEN_SEND_STATES, type ChainSend, type ChainSendRepository, type ChainSendState, type NewChainSend } from '../types.js';
import type { Transactional } from './database.js';

const OPEN = OPEN_SEND_STATES.map((s) => `'${s}'`).join(', ');

/** BEGIN IMMEDIATE holds the file's write lock: one sender at a time across processes sharing the file. */
export function sqliteChainSends(db: Database.Database, write: Transactional): ChainSendRepository {
  const nextNonce = db.prepare<[string, string], { next_nonce: number }>('SELECT next_nonce FROM chain_senders WHERE chain = ? AND sender = ?');
  const setNonce = db.prepare<[string, string, number]>(
    'INSERT INTO chain_senders (chain, sender, next_nonce) VALUES (?, ?, ?) ON CONFLICT (chain, sender) DO UPDATE SET next_nonce = excluded.next_nonce',
  );
  const insert = db.prepare(`INSERT INTO chain_sends (${CHAIN_SEND_COLUMNS}) VALUES (${Array(12).fill('?').join(', ')})`);
  const sign = db.prepare<[string, string, string, string]>("UPDATE chain_sends SET raw = ?, tx_hash = ?, state = 'signed', updated_at = ? WHERE id = ?");
  const byId = db.prepare<[string], ChainSendRow>(`SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE id = ?`);
  const open = db.prepare<[], ChainSendRow>(`SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE state IN (${OPEN}) ORDER BY chain, sender, nonce, created_at`);

  const move = (id: string, from: readonly ChainSendState[], to: ChainSendState, at: string) =>
    db.prepare(`UPDATE chain_sends SET state = ?, updated_at = ? WHERE id = ? AND state IN (${from.map(() => '?').join(', ')})`)
      .run(to, at, id, ...from).changes > 0;

  const openOf = db.prepare<[string, string, string | null], ChainSendRow>(
    `SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE chain = ? AND sender = ? AND (state IN (${OPEN}) OR (state = 'mined' AND updated_at >= ?))`,
  );
  const withHashes = db.prepare<[string, string], ChainSendRow>(
    `SELECT ${CHAIN_SEND_COLUMNS} FROM chain_sends WHERE chain = ? AND tx_hash IN (SELECT value FROM json_each(?))`,
  );
  const reserve = write((send: NewChainSend, chainNonce: number, duplicate?: (open: ChainSend) => boolean, minedSince?: string): ChainSend => {
    const found = duplicate === undefined ? undefined : openOf.all(send.chain, send.sender, minedSince ?? null).map(chainSendOf).find(duplicate);
    if (found !== undefined) return found;
    const stored = nextNonce.get(send.chain, send.sender)?.next_nonce ?? 0;
    const nonce = Math.max(stored, chainNonce);
    setNonce.run(send.chain, send.sender, nonce + 1);
    const row: ChainSend = { ...send, nonce, raw: null, txHash: null, state: 'reserved', replaces: null, updatedAt: send.createdAt };
    insert.run(...chainSendValues(row));
    return row;
  });
  const signTx = write((id: string, raw: string, txHash: string, at: string) => sign.run(raw, txHash, at, id));
  const moveTx = write(move);
  const replaceTx = write((replacedId: string, replacement: ChainSend, outcome: 'replaced' | 'failed' = 'replaced') => {
    if (!move(replacedId, replacedFrom(outcome), outcome, replacement.createdAt)) return false;
    insert.run(...chainSendValues(replacement));
    return true;
  });

  return {
    reserveSend: reserve,
    async signSend(id, raw, txHash, at) {
      await signTx(id, raw, txHash, at);
      if (byId.get(id) === undefined) throw new Error('chain_sends: the send just signed is missing');
    },
    moveSend: moveTx,
    replaceSend: replaceTx,
    async openSends() {
      return open.all().map(chainSendOf);
    },
    async sendsWithHashes(chain, hashes) {
      if (hashes.length === 0) return [];
      return withHashes.all(chain, JSON.stringify(hashes)).map(chainSendOf);
    },
  };
}
