/**
 * A plain answer could be re-sent with another thread id. Public signals, not proof points: Groth16 proofs can be
 * re-randomised by anyone.
 */
import { createHash } from 'node:crypto';

export function proofFingerprint(circuitId: string, pubSignals: readonly string[]): string {
  return createHash('sha256').update(`${circuitId}\n${pubSignals.join(',')}`).digest('hex');
}

export interface ProofReplayGuard {
  /** A wallet may re-send its answer. */
  claim(fingerprints: readonly string[], thid: string, expiresAtMs: number): Promise<string | null>;
}

/** Per process: several instances need a shared guard. */
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
