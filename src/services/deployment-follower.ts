/**
 * Follows every TxPosted deployment transaction of the live scenarios to TxConfirmed or TxFailed, and a
 * DeploymentStarted deployment whose transactions are all final to Deployed or DeploymentFailed (docs/decisions.md,
 * Deployment states). One instance at a time holds the lease; its state is the scenarios themselves, plus what it
 * saw of each transaction in memory (a restart costs one interval). A transaction under the confirmation depth is
 * only in memory: a reorganisation then leaves it TxPosted, and nothing is written until it is deep enough.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { parseChainRef, type ChainSettings } from '../chain/config.js';
import type { OnChainRuleOutcome } from '../chain/outcomes.js';
import { requestIdOf, type ProofStatusReader } from '../chain/proof-status.js';
import type { RequestCheck } from '../chain/request-check.js';
import { txRound, type RoundAnswer, type RoundAsk } from '../chain/tx-round.js';
import type { SmartContractDeployment, Transaction } from '../domain/deployments.js';
import type { Scenario } from '../schemas/scenario.js';
import type { DeploymentFollowing, ScenarioRow } from '../store/types.js';
import type { DeploymentRecorder, RecordTarget } from './deployment-records.js';

const LEASE = 'chain-follower';
const PAGE = 500;
/** Chain errors that a later round may not repeat: the deployment is decided then. */
const TRANSIENT = new Set(['unreachable', 'timeout', 'rpc-error', 'wrong-chain', 'no-rpc']);

export interface FollowerStats {
  pending: number;
  rounds: number;
  holding: boolean;
  /** Chains whose last round failed, or TxPosted transactions on a chain without an RPC endpoint. */
  behind: string[];
}

export interface DeploymentFollowerOptions {
  store: DeploymentFollowing;
  recorder: DeploymentRecorder;
  settings: Pick<ChainSettings, 'chains' | 'defaultChain' | 'timeoutMs' | 'followIntervalMs' | 'confirmations' | 'txDropAfterMs'>;
  reader: ProofStatusReader;
  check: RequestCheck;
  log: FastifyBaseLogger;
  now?: () => number;
}

/** What this instance saw of a transaction. */
interface Seen {
  firstAt: number;
  lastSeenAt: number;
  tx?: { from: string; nonce: bigint; to: string | null; input: string; value: string; gas: string };
  receipt?: { blockNumber: bigint; blockHash: string; reverted: boolean };
  reason?: string;
}

interface Followed {
  target: RecordTarget;
  scenario: Scenario;
  deployment: SmartContractDeployment;
  chain: string;
}

type TxOutcome = { status: 'TxConfirmed'; blockNumber: number; timestamp: number } | { status: 'TxFailed'; errorMessage: string };

const isPosted = (t: Transaction) => t.status === 'TxPosted' && typeof t.txHash === 'string';
const isFinal = (t: Transaction) => t.status === 'TxConfirmed' || t.status === 'TxFailed';
const hashOf = (t: Transaction) => (t.txHash ?? '').toLowerCase();

export class DeploymentFollower {
  readonly holder = randomUUID();
  private readonly seen = new Map<string, Seen>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly stats: FollowerStats = { pending: 0, rounds: 0, holding: false, behind: [] };
  private readonly now: () => number;

  constructor(private readonly options: DeploymentFollowerOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => {
      this.running ??= this.poll().catch((err: unknown) => this.options.log.warn({ err }, 'following deployment transactions failed; will retry'))
        .finally(() => { this.running = undefined; });
    }, this.options.settings.followIntervalMs).unref();
  }

  /** Ends the round under way and gives the lease back, so another instance follows at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    if (this.stats.holding) await this.options.store.releaseLease(LEASE, this.holder).catch(() => {});
    this.stats.holding = false;
  }

  snapshot(): FollowerStats {
    return { ...this.stats, behind: [...this.stats.behind] };
  }

  /** One round: the lease, the scenarios to follow, one batch per chain, then the records. */
  async poll(): Promise<void> {
    const { store, settings } = this.options;
    const at = this.now();
    const until = new Date(at + Math.max(3 * settings.followIntervalMs, 5000)).toISOString();
    this.stats.holding = await store.holdLease(LEASE, this.holder, new Date(at).toISOString(), until);
    if (!this.stats.holding || this.stopped) {
      Object.assign(this.stats, { pending: 0, behind: [] });
      return;
    }
    const followed = await this.followedDeployments();
    const byChain = new Map<string, Followed[]>();
    const behind = new Set<string>();
    let pending = 0;
    for (const f of followed) {
      pending += (f.deployment.transactions ?? []).filter(isPosted).length;
      if (!settings.chains.has(f.chain)) behind.add(f.chain);
      else byChain.set(f.chain, [...(byChain.get(f.chain) ?? []), f]);
    }
    this.stats.pending = pending;
    for (const [chain, list] of byChain) {
      if (this.stopped) break;
      if (!(await this.followChain(chain, list))) behind.add(chain);
    }
    this.stats.behind = [...behind];
    this.forgetOthers(followed);
  }

  private async followedDeployments(): Promise<Followed[]> {
    const out: Followed[] = [];
    for (let after = 0; ;) {
      const rows = await this.options.store.scenariosToFollow(after, PAGE);
      for (const row of rows) out.push(...this.deploymentsOf(row));
      if (rows.length < PAGE) return out;
      after = rows.at(-1)?.seq ?? after;
    }
  }

  private deploymentsOf(row: ScenarioRow): Followed[] {
    const target = { id: row.id, projectId: row.input.projectId ?? null, seq: row.seq };
    return row.input.smartContractDeployments.flatMap((d) => {
      const txs = d.transactions ?? [];
      const open = txs.some(isPosted) || (d.status === 'DeploymentStarted' && txs.length > 0);
      const chain = parseChainRef(d.chain ?? this.options.settings.defaultChain)?.chain;
      return open && chain !== undefined ? [{ target, scenario: row.input, deployment: d, chain }] : [];
    });
  }

  /** False when the chain did not answer. */
  private async followChain(chain: string, list: Followed[]): Promise<boolean> {
    const endpoint = this.options.settings.chains.get(chain);
    if (endpoint === undefined) return false;
    const ask = this.ask(list);
    let answer: RoundAnswer;
    try {
      this.stats.rounds++;
      // A batch of thousands of calls may take longer than one verification read: up to an interval.
      answer = await txRound(endpoint.url, ask, Math.max(this.options.settings.timeoutMs, this.options.settings.followIntervalMs));
      if (answer.chainId !== endpoint.chainId) throw new Error(`the RPC endpoint configured for ${chain} serves chain eip155:${answer.chainId}`);
    } catch (err) {
      this.options.log.warn({ chain, err: err instanceof Error ? err.message : String(err) }, 'deployment transactions not followed this round');
      return false;
    }
    await this.learn(ask, answer);
    for (const f of list) {
      if (this.stopped) break;
      await this.decide(f, answer).catch((err: unknown) => {
        this.options.log.warn({ err, scenarioId: f.target.id, deployment: f.deployment.id }, 'a deployment change was not recorded; will retry');
      });
    }
    return true;
  }

  private ask(list: Followed[]): RoundAsk {
    const receipts = new Set<string>();
    const transactions = new Set<string>();
    const blocks = new Set<bigint>();
    const nonces = new Set<string>();
    const replays: RoundAsk['replays'][number][] = [];
    for (const f of list) {
      for (const t of f.deployment.transactions ?? []) {
        const hash = hashOf(t);
        if (!isPosted(t)) {
          // The verifier's address of a deployment recorded without one: its transactions' `to`.
          if (f.deployment.address == null && t.status === 'TxConfirmed' && hash !== '' && this.seen.get(hash)?.tx === undefined) transactions.add(hash);
          continue;
        }
        receipts.add(hash);
        const seen = this.seen.get(hash);
        if (seen?.receipt === undefined || seen.tx === undefined) transactions.add(hash);
        if (seen?.receipt !== undefined) blocks.add(seen.receipt.blockNumber);
        if (seen?.receipt === undefined && seen?.tx !== undefined) nonces.add(seen.tx.from);
        if (seen?.receipt?.reverted === true && seen.tx !== undefined && seen.reason === undefined) {
          const { from, to, input, value, gas } = seen.tx;
          // `data`, not `input`: what every node reads.
          replays.push({ hash, call: { from, to, data: input, value, gas }, block: seen.receipt.blockNumber });
        }
      }
    }
    return { receipts: [...receipts], transactions: [...transactions], blocks: [...blocks], nonces: [...nonces], replays };
  }

  private async learn(ask: RoundAsk, answer: RoundAnswer): Promise<void> {
    const at = this.now();
    for (const hash of new Set([...ask.receipts, ...ask.transactions])) {
      const seen = this.seen.get(hash) ?? { firstAt: at, lastSeenAt: at };
      this.seen.set(hash, seen);
      const tx = answer.transactions.get(hash);
      if (tx) {
        seen.tx = tx;
        seen.lastSeenAt = at;
      }
      if (!answer.receipts.has(hash)) continue;
      const receipt = answer.receipts.get(hash);
      if (receipt) {
        seen.lastSeenAt = at;
        if (seen.receipt?.blockHash !== receipt.blockHash) seen.reason = undefined;
        seen.receipt = { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, reverted: receipt.reverted };
      } else {
        seen.receipt = undefined;
        seen.reason = undefined;
      }
    }
    for (const [hash, replay] of answer.replays) {
      const seen = this.seen.get(hash);
      if (seen === undefined) continue;
      if ('data' in replay) {
        const { revertReason } = await import('../chain/revert-reason.js');
        seen.reason = revertReason(replay.data);
      } else {
        seen.reason = `reverted; replaying it did not give the reason (${replay.error})`;
      }
    }
  }

  /** A transaction's final status, if it has one in this round. */
  private outcome(t: Transaction, answer: RoundAnswer): TxOutcome | undefined {
    const hash = hashOf(t);
    const seen = this.seen.get(hash);
    if (seen === undefined) return undefined;
    const receipt = seen.receipt;
    if (receipt === undefined) {
      const nonce = seen.tx === undefined ? undefined : answer.nonces.get(seen.tx.from.toLowerCase());
      if (seen.tx !== undefined && nonce !== undefined && nonce > seen.tx.nonce && answer.transactions.get(hash) == null) {
        return { status: 'TxFailed', errorMessage: `dropped: sender ${seen.tx.from} has used nonce ${seen.tx.nonce} for another transaction` };
      }
      const unseenMs = this.now() - seen.lastSeenAt;
      if (unseenMs >= this.options.settings.txDropAfterMs) {
        return { status: 'TxFailed', errorMessage: `dropped: neither mined nor pending on ${this.chainName(answer)} for ${Math.round(unseenMs / 1000)} s` };
      }
      return undefined;
    }
    const block = answer.blocks.get(receipt.blockNumber);
    // Its block as the chain has it now: another hash is a reorganisation (the receipt is read again next round).
    if (block == null || block.hash !== receipt.blockHash) return undefined;
    if (answer.head - receipt.blockNumber + 1n < BigInt(this.options.settings.confirmations)) return undefined;
    if (!receipt.reverted) return { status: 'TxConfirmed', blockNumber: Number(receipt.blockNumber), timestamp: block.timestamp };
    return seen.reason === undefined ? undefined : { status: 'TxFailed', errorMessage: seen.reason };
  }

  private chainName(answer: RoundAnswer): string {
    return `eip155:${answer.chainId}`;
  }

  private async decide(f: Followed, answer: RoundAnswer): Promise<void> {
    const outcomes = new Map<string, TxOutcome & { hash: string }>();
    for (const t of f.deployment.transactions ?? []) {
      const o = isPosted(t) ? this.outcome(t, answer) : undefined;
      if (o !== undefined) outcomes.set(t.id, { ...o, hash: hashOf(t) });
    }
    const after = (f.deployment.transactions ?? []).map((t) => {
      const { hash: _hash, ...o } = outcomes.get(t.id) ?? { hash: '' };
      return { ...t, ...o };
    });
    let verdict: Pick<SmartContractDeployment, 'status' | 'address' | 'errorMessage'> | undefined;
    if (f.deployment.status === 'DeploymentStarted' && after.length > 0 && after.every(isFinal)) {
      verdict = await this.verdict(f, after);
    }
    if (outcomes.size === 0 && verdict === undefined) return;
    // Applied to the scenario as it is then: what a PATCH decided meanwhile stands.
    await this.options.recorder.record(f.target, f.deployment.id, (current) => {
      const d = current.smartContractDeployments.find((x) => x.id === f.deployment.id);
      if (d === undefined) return null;
      let changed = false;
      d.transactions = (d.transactions ?? []).map((t) => {
        const found = outcomes.get(t.id);
        if (found === undefined || !isPosted(t) || hashOf(t) !== found.hash) return t;
        changed = true;
        const { hash: _hash, ...o } = found;
        return { ...t, ...o };
      });
      if (verdict !== undefined && d.status === 'DeploymentStarted' && d.transactions.every(isFinal)) {
        Object.assign(d, verdict);
        changed = true;
      }
      return changed ? current : null;
    });
  }

  /** undefined: not decided this round (the chain did not answer). */
  private async verdict(f: Followed, txs: Transaction[]): Promise<Pick<SmartContractDeployment, 'status' | 'address' | 'errorMessage'> | undefined> {
    const failed = txs.find((t) => t.status === 'TxFailed');
    if (failed !== undefined) {
      return { status: 'DeploymentFailed', errorMessage: `transaction "${failed.id}" failed: ${failed.errorMessage ?? 'no reason recorded'}` };
    }
    const address = f.deployment.address ?? txs.map((t) => this.seen.get(hashOf(t))?.tx?.to).find((to) => typeof to === 'string');
    if (typeof address !== 'string') return undefined;
    if (f.scenario.type !== 'OnChainZKP') return { status: 'Deployed', address };
    const differences = await this.differences(f, address);
    if (differences === undefined) return undefined;
    return differences.length === 0
      ? { status: 'Deployed', address }
      : { status: 'DeploymentFailed', errorMessage: `the verifier's requests differ from the rules: ${differences.join('; ')}`.slice(0, 4096) };
  }

  /** What differs between the rules and the verifier's requests; undefined when the chain did not answer. */
  private async differences(f: Followed, address: string): Promise<string[] | undefined> {
    const { reader, check } = this.options;
    const rules = f.scenario.queryConfigurations;
    const missing = rules.filter((qc) => requestIdOf(qc.query.requestId) === undefined).map((qc) => `rule "${qc.id}" has no requestId`);
    const ids = rules.flatMap((qc) => {
      const id = requestIdOf(qc.query.requestId);
      return id === undefined ? [] : [id];
    });
    if (ids.length === 0) return missing;
    const entries = await reader.readRequests?.({ chain: f.chain, verifierAddress: address, requestIds: ids }) ?? [];
    if (entries.some((e) => 'code' in e && TRANSIENT.has(e.code))) return undefined;
    const outcomes = rules.map((qc): OnChainRuleOutcome => ({
      objectId: qc.id, requestId: requestIdOf(qc.query.requestId)?.toString() ?? null, status: 'valid', is_valid: true, reasons: [],
      scenarioVerifierAddress: address, chain: f.chain, blockNumber: null,
    }));
    const checked = await check.apply(outcomes, rules, entries, f.scenario.trustedIssuers);
    return [...missing, ...checked.filter((o) => o.requestId !== null && o.status === 'error').flatMap((o) => o.reasons)];
  }

  /** Transactions no longer followed are forgotten. */
  private forgetOthers(followed: Followed[]): void {
    const keep = new Set(followed.flatMap((f) => (f.deployment.transactions ?? []).map(hashOf)));
    for (const hash of this.seen.keys()) if (!keep.has(hash)) this.seen.delete(hash);
  }
}
