/**
 * Replay protection across authorization requests. A V2 query proof is bound to its request id (a small number
 * every scenario reuses), not to the request's thread: a JWZ answer binds its proofs to the thread by the authV2
 * proof over the whole message, but an unsigned (plain) answer could be re-sent with another thread id. So every
 * accepted proof is claimed for the thread it answered, and a proof already claimed by another thread is refused.
 *
 * The fingerprint hashes the circuit id and the public signals, not the proof points: Groth16 proofs can be
 * re-randomised by anyone, public signals cannot change without breaking the proof (and an honest wallet's new
 * proof differs in its timestamp signal).
 */
import { createHash } from 'node:crypto';

export function proofFingerprint(circuitId: string, pubSignals: readonly string[]): string {
  return createHash('sha256').update(`${circuitId}\n${pubSignals.join(',')}`).digest('hex');
}

export interface ProofReplayGuard {
  /**
   * Atomically records that the proofs with these fingerprints answered `thid`, unless one of them already answered
   * another thread: then nothing is recorded and that fingerprint is returned. Claiming again for the same thread
   * succeeds (a wallet may re-send its answer).
   */
  claim(fingerprints: readonly string[], thid: string, expiresAtMs: number): Promise<string | null>;
}

/**
 * Per-process guard (a Map). Entries are kept until `expiresAtMs` (the verifier passes the end of the proof-age
 * window: an older proof is refused anyway). Several service instances need a shared guard (e.g. a table with a
 * unique fingerprint column) instead.
 */
export class InMemoryReplayGuard implements ProofReplayGuard {
  private readonly entries = new Map<string, { thid: string; expiresAtMs: number }>();
  private readonly now: () => number;
  private readonly maxEntries: number;

  constructor(options: { now?: () => number; maxEntries?: number } = {}) {
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 1_000_000;
  }

  async claim(fingerprints: readonly string[], thid: string, expiresAtMs: number): Promise<string | null> {
    const now = this.now();
    for (const fp of fingerprints) {
      const e = this.entries.get(fp);
      if (e && e.expiresAtMs > now && e.thid !== thid) return fp;
    }
    if (this.entries.size + fingerprints.length > this.maxEntries) this.sweep(now);
    for (const fp of fingerprints) {
      const e = this.entries.get(fp);
      this.entries.set(fp, { thid, expiresAtMs: Math.max(expiresAtMs, e?.thid === thid ? e.expiresAtMs : 0) });
    }
    return null;
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    for (const [fp, e] of this.entries) if (e.expiresAtMs <= now) this.entries.delete(fp);
    // Still full of live entries: drop the oldest inserted (a Map iterates in insertion order).
    const excess = this.entries.size - Math.floor(this.maxEntries * 0.9);
    if (excess > 0) {
      let n = 0;
      for (const fp of this.entries.keys()) {
        if (n++ >= excess) break;
        this.entries.delete(fp);
      }
    }
  }
}
