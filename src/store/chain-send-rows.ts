import type { ChainSend, ChainSendState } from './types.js';

/** A send replaced with a higher fee was on its way; one failed for good was refused at its broadcast (still signed). */
export const replacedFrom = (outcome: 'replaced' | 'failed'): ChainSendState[] => (outcome === 'replaced' ? ['broadcast', 'recorded'] : ['signed']);

/** The columns of chain_sends, in the order both stores write them. */
export const CHAIN_SEND_COLUMNS = 'id, chain, sender, nonce, request, raw, tx_hash, purpose, state, replaces, created_at, updated_at';

export interface ChainSendRow {
  id: string;
  chain: string;
  sender: string;
  nonce: number | string;
  request: string;
  raw: string | null;
  tx_hash: string | null;
  purpose: string;
  state: string;
  replaces: string | null;
  created_at: string;
  updated_at: string;
}

export const chainSendOf = (r: ChainSendRow): ChainSend => ({
  id: r.id, chain: r.chain, sender: r.sender, nonce: Number(r.nonce), request: r.request, raw: r.raw, txHash: r.tx_hash,
  purpose: r.purpose, state: r.state as ChainSendState, replaces: r.replaces, createdAt: r.created_at, updatedAt: r.updated_at,
});

export const chainSendValues = (s: ChainSend) =>
  [s.id, s.chain, s.sender, s.nonce, s.request, s.raw, s.txHash, s.purpose, s.state, s.replaces, s.createdAt, s.updatedAt] as const;
