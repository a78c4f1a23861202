/**
 * Follows every TxPosted deployment transaction of the live scenarios to TxConfirmed or TxFailed, and a
 * DeploymentStarted deployment whose transactions are all final to Deployed or DeploymentFailed (docs/decisions.md,
 * Following deployments). One instance at a time holds the lease; its state is the scenarios themselves, plus what it
 * saw of each transaction in memory (a restart costs one interval). A transaction under the confirmation depth is
 * only in memory: a reorganisation then leaves it TxPosted, and nothing is written until it is deep enough.
 */
import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { parseChainRef, redactRpcUrl, type ChainSettings } from '../chain/config.js';
import type { OnChainRuleOutcome } from '../chain/outcomes.js';
import { requestIdOf, type ProofStatusReader } from '../chain/proof-status.js';
import type { RequestCheck } from '../chain/request-check.js';
import { txRound, type RoundAnswer, type RoundAsk } from '../chain/tx-round.js';
import { supersedeWith, TX_HASH, withRequestIds, type SmartContractDeployment, type Transaction } from '../domain/deployments.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ChainSendRepository, DeploymentFollowing, ScenarioRow } from '../store/types.js';
import type { DeploymentRecorder, RecordTarget } from './deployment-records.js';

const LEASE = 'chain-follower';
const PAGE = 500;
/** The schema's limit of an errorMessage. */
const MESSAGE_MAX = 4096;
/** Bytes read of one batch's answer: 100 receipts with large logs stay far under it. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** Verifier reads (one readRequests each) per round and chain; the others wait for the next round. */
const MAX_VERIFIER_READS = 50;
/** Deployments prepared at once in a round: their verifier reads start together. */
const DECIDE_CHUNK = 100;
/** Chain errors that a later round may not repeat: the deployment is decided then. */
const TRANSIENT = new Set(['unreachable', 'timeout', 'rpc-error', 'wrong-chain', 'no-rpc']);

export interface FollowerStats {
  /** TxPosted transactions loaded this round (at most CHAIN_FOLLOW_MAX_TXS). */
  pending: number;
  rounds: number;
  holding: boolean;
  /** Chains whose last round failed, or TxPosted transactions on a chain without an RPC endpoint. */
  behind: string[];
}

export interface DeploymentFollowerOptions {
  store: DeploymentFollowing & Pick<ChainSendRepository, 'sendsWithHashes'>;
  recorder: DeploymentRecorder;
  settings: Pick<ChainSettings, 'chains' | 'defaultChain' | 'timeoutMs' | 'followIntervalMs' | 'confirmations' | 'txDropAfterMs'
    | 'rpcBatchLimit' | 'followMaxTxs'>;
  reader: ProofStatusReader;
  check: RequestCheck;
  log: FastifyBaseLogger;
  now?: () => number;
}

/** What this instance saw of a transaction on one chain. */
interface Seen {
  tx?: { from: string; nonce: bigint; to: string | null; input: string; value: string; gas: string };
  receipt?: { blockNumber: bigint; blockHash: string; reverted: boolean; contractAddress: string | null };
  reason?: string;
  /** Time counted while rounds saw it neither mined nor pending and the head advanced. */
  absentMs: number;
  /** The last round that saw it absent: its time and head. */
  absentAt?: { at: number; head: bigint };
  /** The last lap (a pass over every followed scenario) that loaded it. */
  lap: number;
}

interface Followed {
  target: RecordTarget;
  scenario: Scenario;
  deployment: SmartContractDeployment;
  chain: string;
}

type TxOutcome = { status: 'TxConfirmed'; blockNumber: number; timestamp: number } | { status: 'TxFailed'; errorMessage: string };
type Verdict = Pick<SmartContractDeployment, 'status' | 'address' | 'errorMessage'>;
type Outcomes = Map<string, TxOutcome & { hash: string }>;
interface Prepared { f: Followed; outcomes: Outcomes; verdict?: Verdict | { read: { address: string } } }
interface Decided { f: Followed; outcomes: Outcomes; verdict?: Verdict }

/** A stored hash that is not a transaction hash (written before the check) is never asked for. */
const isPosted = (t: Transaction) => t.status === 'TxPosted' && typeof t.txHash === 'string' && TX_HASH.test(t.txHash);
const isFinal = (t: Transaction) => t.status === 'TxConfirmed' || t.status === 'TxFailed';
/**
 * DeploymentStarted with every transaction final; or with none at all where it names its requests (a deploy that
 * found them all on the verifier sends nothing): decided by reading the verifier.
 */
const toDecide = (d: SmartContractDeployment, txs: Transaction[]) =>
  d.status === 'DeploymentStarted' && txs.every(isFinal) && (txs.length > 0 || (d.transactions !== undefined && (d.requests ?? []).length > 0));
const hashOf = (t: Transaction) => (t.txHash ?? '').toLowerCase();
const clipped = (text: string) => (text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX - 1)}…` : text);

/** What a verdict was computed from: a PATCH that changed any of it meanwhile voids the verdict. */
function basis(scenario: Scenario, d: SmartContractDeployment): string {
  const { type, queryConfigurations, trustedIssuers } = scenario;
  const text = JSON.stringify([d.address ?? null, d.chain ?? null, d.transactions ?? [], type, queryConfigurations, trustedIssuers ?? null]);
  return createHash('sha256').update(text).digest('hex');
}

/** An error's text without the endpoint's path, query or credentials (fetch's own messages name the URL). */
function redactedError(err: unknown, url: string): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split(url).join(redactRpcUrl(url)).replace(/\/\/[^/\s@]*@/g, '//');
}

export class DeploymentFollower {
  readonly holder = randomUUID();
  private readonly seen = new Map<string, Seen>();
  /** Each chain's head in its last round: nonces are read that many confirmations under it. */
  private readonly heads = new Map<string, bigint>();
  /** Where the next round's load starts (round-robin when there are more than CHAIN_FOLLOW_MAX_TXS). */
  private cursor = 0;
  private lap = 0;
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

  /** Takes or renews the lease on the database's clock; a lost lease forgets what was seen (another followed meanwhile). */
  private async renew(): Promise<boolean> {
    const ttl = Math.max(3 * this.options.settings.followIntervalMs, 5000);
    const holding = await this.options.store.holdLease(LEASE, this.holder, ttl);
    if (!holding) {
      this.seen.clear();
      this.heads.clear();
    }
    this.stats.holding = holding;
    return holding && !this.stopped;
  }

  /** One round: the lease, the scenarios to follow, a round of batches per chain, then the records. */
  async poll(): Promise<void> {
    const { settings } = this.options;
    if (!(await this.renew())) {
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
      else {
        const list = byChain.get(f.chain);
        if (list === undefined) byChain.set(f.chain, [f]);
        else list.push(f);
      }
    }
    this.stats.pending = pending;
    // A round takes at most about an interval per chain; the lease is renewed between chains.
    for (const [chain, list] of byChain) {
      if (!(await this.renew())) return;
      if (!(await this.followChain(chain, list))) behind.add(chain);
    }
    this.stats.behind = [...behind];
    this.forgetOthers(followed, this.cursor === 0);
  }

  /** From the cursor, up to CHAIN_FOLLOW_MAX_TXS transactions' worth of deployments; the next round goes on from there. */
  private async followedDeployments(): Promise<Followed[]> {
    const out: Followed[] = [];
    let weight = 0;
    for (let after = this.cursor; ;) {
      const rows = await this.options.store.scenariosToFollow(after, PAGE);
      for (const row of rows) {
        const found = this.deploymentsOf(row);
        out.push(...found);
        weight += found.reduce((n, f) => n + Math.max(1, (f.deployment.transactions ?? []).filter(isPosted).length), 0);
        if (weight >= this.options.settings.followMaxTxs) {
          this.cursor = row.seq;
          return out;
        }
      }
      if (rows.length < PAGE) {
        this.cursor = 0;
        return out;
      }
      after = rows.at(-1)?.seq ?? after;
    }
  }

  /** Deployments with something to ask the chain: a TxPosted hash, or DeploymentStarted with every transaction final. */
  private deploymentsOf(row: ScenarioRow): Followed[] {
    const target = { id: row.id, projectId: row.input.projectId ?? null, seq: row.seq };
    return row.input.smartContractDeployments.flatMap((d) => {
      const txs = d.transactions ?? [];
      const open = txs.some(isPosted) || toDecide(d, txs);
      const chain = parseChainRef(d.chain ?? this.options.settings.defaultChain)?.chain;
      return open && chain !== undefined ? [{ target, scenario: row.input, deployment: d, chain }] : [];
    });
  }

  /** False when the chain did not answer. */
  private async followChain(chain: string, list: Followed[]): Promise<boolean> {
    const { settings, log } = this.options;
    const endpoint = settings.chains.get(chain);
    if (endpoint === undefined) return false;
    const ask = this.ask(chain, list);
    let answer: RoundAnswer;
    try {
      this.stats.rounds++;
      answer = await txRound(endpoint.url, ask, {
        timeoutMs: Math.max(settings.timeoutMs, settings.followIntervalMs), batchLimit: settings.rpcBatchLimit, maxResponseBytes: MAX_RESPONSE_BYTES,
      });
      if (answer.chainId !== endpoint.chainId) throw new Error(`the RPC endpoint configured for ${chain} serves chain eip155:${answer.chainId}`);
    } catch (err) {
      log.warn({ chain, err: redactedError(err, endpoint.url) }, 'deployment transactions not followed this round');
      return false;
    }
    await this.learn(chain, ask, answer);
    this.heads.set(chain, answer.head);
    const reads = { left: MAX_VERIFIER_READS };
    // Real time, not the injected clock: past two intervals the rest waits for the next round (the lease lasts three).
    const deadline = performance.now() + 2 * Math.max(settings.followIntervalMs, settings.timeoutMs);
    const failed = (f: Followed) => (err: unknown) => {
      log.warn({ err, scenarioId: f.target.id, deployment: f.deployment.id }, 'a deployment change was not recorded; will retry');
      return undefined;
    };
    for (let i = 0; i < list.length; i += DECIDE_CHUNK) {
      if (this.stopped || performance.now() > deadline) break;
      const chunk = list.slice(i, i + DECIDE_CHUNK);
      const prepared = await Promise.all(chunk.map((f) => this.prepare(f, answer, reads).catch(failed(f))));
      // Started in one go, the verifier reads of these verdicts share the reader's JSON-RPC batches (one HTTP request
      // for their getRequest and getMultiRequest calls).
      const decided = await Promise.all(prepared.map((p) => (p === undefined ? undefined : this.readVerdict(p).catch(failed(p.f)))));
      for (const d of decided) {
        if (d === undefined || this.stopped) continue;
        await this.record(d).catch(failed(d.f));
      }
    }
    return true;
  }

  private key(chain: string, hash: string): string {
    return `${chain}:${hash}`;
  }

  private ask(chain: string, list: Followed[]): RoundAsk {
    const receipts = new Set<string>();
    const transactions = new Set<string>();
    const blocks = new Set<bigint>();
    const nonces = new Set<string>();
    const replays: RoundAsk['replays'][number][] = [];
    for (const f of list) {
      for (const t of f.deployment.transactions ?? []) {
        const hash = hashOf(t);
        const seen = this.seen.get(this.key(chain, hash));
        if (!isPosted(t)) {
          // The verifier's address of a deployment recorded without one: its transactions' `to` or created contract.
          if (f.deployment.address == null && t.status === 'TxConfirmed' && TX_HASH.test(hash) && (seen?.tx === undefined || seen.receipt === undefined)) {
            transactions.add(hash);
            receipts.add(hash);
          }
          continue;
        }
        receipts.add(hash);
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
    // A nonce that has passed a transaction only counts once it is as deep as a confirmation (last round's head).
    const head = this.heads.get(chain);
    const nonceBlock = head === undefined ? undefined : head - BigInt(this.options.settings.confirmations) + 1n;
    const asked = nonceBlock === undefined || nonceBlock < 0n ? [] : [...nonces];
    return { receipts: [...receipts], transactions: [...transactions], blocks: [...blocks], nonces: asked, nonceBlock, replays };
  }

  private async learn(chain: string, ask: RoundAsk, answer: RoundAnswer): Promise<void> {
    const at = this.now();
    for (const hash of new Set([...ask.receipts, ...ask.transactions])) {
      const key = this.key(chain, hash);
      const seen = this.seen.get(key) ?? { absentMs: 0, lap: this.lap };
      this.seen.set(key, seen);
      const tx = answer.transactions.get(hash);
      if (tx) seen.tx = tx;
      const receipt = answer.receipts.get(hash);
      if (receipt) {
        if (seen.receipt?.blockHash !== receipt.blockHash) seen.reason = undefined;
        seen.receipt = { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, reverted: receipt.reverted, contractAddress: receipt.contractAddress };
      } else if (receipt === null) {
        seen.receipt = undefined;
        seen.reason = undefined;
      }
      this.countAbsence(seen, receipt === null && answer.transactions.get(hash) === null, at, answer.head);
    }
    for (const [hash, replay] of answer.replays) {
      const seen = this.seen.get(this.key(chain, hash));
      if (seen === undefined) continue;
      if ('data' in replay) {
        const { revertReason } = await import('../chain/revert-reason.js');
        seen.reason = revertReason(replay.data);
      } else {
        seen.reason = `reverted; replaying it did not give the reason (${replay.error})`;
      }
    }
  }

  /** Only rounds that saw it absent, one after another, while the chain moved on count towards a drop. */
  private countAbsence(seen: Seen, absent: boolean, at: number, head: bigint): void {
    if (!absent) {
      seen.absentMs = 0;
      seen.absentAt = undefined;
      return;
    }
    // A stalled head (the node stuck) counts nothing.
    if (seen.absentAt !== undefined && head > seen.absentAt.head) seen.absentMs += at - seen.absentAt.at;
    seen.absentAt = { at, head };
  }

  /** A transaction's final status, if it has one in this round. */
  private outcome(chain: string, t: Transaction, answer: RoundAnswer): TxOutcome | undefined {
    const hash = hashOf(t);
    const seen = this.seen.get(this.key(chain, hash));
    if (seen === undefined) return undefined;
    const receipt = seen.receipt;
    if (receipt === undefined) {
      const nonce = seen.tx === undefined ? undefined : answer.nonces.get(seen.tx.from.toLowerCase());
      if (seen.tx !== undefined && nonce !== undefined && nonce > seen.tx.nonce && answer.transactions.get(hash) === null && answer.receipts.get(hash) === null) {
        return { status: 'TxFailed', errorMessage: `dropped: sender ${seen.tx.from} has used nonce ${seen.tx.nonce} for another transaction` };
      }
      if (seen.absentMs >= this.options.settings.txDropAfterMs) {
        return { status: 'TxFailed', errorMessage: `dropped: neither mined nor pending on ${chain} for ${Math.round(seen.absentMs / 1000)} s` };
      }
      return undefined;
    }
    const block = answer.blocks.get(receipt.blockNumber);
    // Its block as the chain has it now: another hash is a reorganisation (the receipt is read again next round).
    if (block == null || block.hash !== receipt.blockHash) return undefined;
    if (answer.head - receipt.blockNumber + 1n < BigInt(this.options.settings.confirmations)) return undefined;
    if (!receipt.reverted) return { status: 'TxConfirmed', blockNumber: Number(receipt.blockNumber), timestamp: block.timestamp };
    return seen.reason === undefined ? undefined : { status: 'TxFailed', errorMessage: clipped(seen.reason) };
  }

  /** A deployment's transaction outcomes this round, and its verdict, or the verifier address to read for it. */
  private async prepare(f: Followed, answer: RoundAnswer, reads: { left: number }): Promise<Prepared | undefined> {
    const outcomes = new Map<string, TxOutcome & { hash: string }>();
    for (const t of f.deployment.transactions ?? []) {
      const o = isPosted(t) ? this.outcome(f.chain, t, answer) : undefined;
      if (o !== undefined) outcomes.set(t.id, { ...o, hash: hashOf(t) });
    }
    const after = (f.deployment.transactions ?? []).map((t) => {
      const { hash: _hash, ...o } = outcomes.get(t.id) ?? { hash: '' };
      return { ...t, ...o };
    });
    const verdict = toDecide(f.deployment, after) ? await this.verdict(f, after, reads) : undefined;
    if (outcomes.size === 0 && verdict === undefined) return undefined;
    return { f, outcomes, verdict };
  }

  /** The verdict of a prepared deployment whose verifier is to be read; undefined when the chain did not answer. */
  private async readVerdict(p: Prepared): Promise<Decided | undefined> {
    if (p.verdict === undefined || !('read' in p.verdict)) return { f: p.f, outcomes: p.outcomes, verdict: p.verdict };
    const { address } = p.verdict.read;
    const differences = await this.differences(p.f, address);
    let verdict: Verdict | undefined;
    if (differences !== undefined) {
      verdict = differences.length === 0
        ? { status: 'Deployed', address }
        : { status: 'DeploymentFailed', errorMessage: clipped(`the verifier's requests differ from the rules: ${differences.join('; ')}`) };
    }
    return verdict === undefined && p.outcomes.size === 0 ? undefined : { f: p.f, outcomes: p.outcomes, verdict };
  }

  private async record({ f, outcomes, verdict }: Decided): Promise<void> {
    const readFrom = basis(f.scenario, f.deployment);
    if (!(await this.renew())) return;
    // Applied to the scenario as it is then: what a PATCH decided meanwhile stands.
    await this.options.recorder.record(f.target, f.deployment.id, (current) => {
      const d = current.smartContractDeployments.find((x) => x.id === f.deployment.id);
      if (d === undefined) return null;
      // The verdict stands only on what it was computed from; else the next round computes it again.
      const sameBasis = basis(current, d) === readFrom;
      let changed = false;
      d.transactions = (d.transactions ?? []).map((t) => {
        const found = outcomes.get(t.id);
        if (found === undefined || !isPosted(t) || hashOf(t) !== found.hash) return t;
        changed = true;
        const { hash: _hash, ...o } = found;
        return { ...t, ...o };
      });
      if (verdict !== undefined && sameBasis && d.status === 'DeploymentStarted' && d.transactions.every(isFinal)) {
        Object.assign(d, verdict);
        // Deployed: the rules take its request ids and it deprecates the others, in this same revision.
        if (verdict.status === 'Deployed') return supersedeWith(current, d.id);
        changed = true;
      }
      return changed ? current : null;
    });
  }

  /** The contract the transactions address: the deployment's, else the one every transaction names. */
  private addressOf(f: Followed, txs: Transaction[]): { address: string } | { problem: string } | undefined {
    if (typeof f.deployment.address === 'string' && f.deployment.address !== '') return { address: f.deployment.address };
    const named = new Set<string>();
    for (const t of txs) {
      const seen = this.seen.get(this.key(f.chain, hashOf(t)));
      if (seen?.tx === undefined || seen.receipt === undefined) return undefined;
      const to = seen.tx.to ?? seen.receipt.contractAddress;
      if (to === null) return { problem: `transaction "${t.id}" neither calls nor creates a contract` };
      named.add(to.toLowerCase());
    }
    if (named.size === 1) return { address: [...named][0]! };
    return { problem: `its transactions address different contracts (${[...named].join(', ')}) and it names no address` };
  }

  /**
   * The dropped transactions (never mined, so they changed nothing) whose nonce a confirmed transaction of the same
   * deployment took: losers to a replacement with a higher fee (the deploy route appends it), not failures. The
   * sender and nonce come from chain_sends for the service's own sends (a restart forgets nothing), else from what
   * this instance saw on chain; a transaction of unknown nonce is a failure. The verifier is compared all the same.
   */
  private async replacedLosers(chain: string, txs: Transaction[]): Promise<Set<string>> {
    const dropped = txs.filter((t) => t.status === 'TxFailed' && (t.errorMessage ?? '').startsWith('dropped:'));
    const confirmed = txs.filter((t) => t.status === 'TxConfirmed');
    if (dropped.length === 0 || confirmed.length === 0) return new Set();
    const sends = await this.options.store.sendsWithHashes(chain, [...new Set([...dropped, ...confirmed].map(hashOf))]);
    const stored = new Map(sends.map((s) => [(s.txHash ?? '').toLowerCase(), `${s.sender.toLowerCase()}|${s.nonce}`]));
    const slotOf = (t: Transaction): string | undefined => {
      const tx = this.seen.get(this.key(chain, hashOf(t)))?.tx;
      return stored.get(hashOf(t)) ?? (tx === undefined ? undefined : `${tx.from.toLowerCase()}|${tx.nonce}`);
    };
    const taken = new Set(confirmed.map(slotOf));
    return new Set(dropped.filter((t) => {
      const slot = slotOf(t);
      return slot !== undefined && taken.has(slot);
    }).map((t) => t.id));
  }

  /**
   * undefined: not decided this round (its turn to read the verifier is next round); `read`: decided by reading the
   * verifier at that address (readVerdict).
   */
  private async verdict(f: Followed, txs: Transaction[], reads: { left: number }): Promise<Verdict | { read: { address: string } } | undefined> {
    const losers = await this.replacedLosers(f.chain, txs);
    const failed = txs.find((t) => t.status === 'TxFailed' && !losers.has(t.id));
    if (failed !== undefined) {
      return { status: 'DeploymentFailed', errorMessage: clipped(`transaction "${failed.id}" failed: ${failed.errorMessage ?? 'no reason recorded'}`) };
    }
    const unsent = this.multiUnsent(f.deployment, txs);
    if (unsent === 'wait') return undefined;
    if (unsent !== undefined) return unsent;
    const found = this.addressOf(f, txs.filter((t) => t.status === 'TxConfirmed'));
    if (found === undefined) return undefined;
    if ('problem' in found) return { status: 'DeploymentFailed', errorMessage: clipped(found.problem) };
    const { address } = found;
    if (f.scenario.type !== 'OnChainZKP') return { status: 'Deployed', address };
    if (reads.left <= 0) return undefined;
    reads.left--;
    return { read: { address } };
  }

  /**
   * What differs between the rules and the verifier's requests; undefined when the chain did not answer. The request
   * ids are the deployment's own where it records them (after a redeploy the rules still carry the old deployment's).
   */
  private async differences(f: Followed, address: string): Promise<string[] | undefined> {
    const { reader, check } = this.options;
    const rules = withRequestIds(f.scenario.queryConfigurations, f.deployment.requests ?? []);
    const missing = rules.filter((qc) => requestIdOf(qc.query.requestId) === undefined).map((qc) => `rule "${qc.id}" has no requestId`);
    const ids = rules.flatMap((qc) => {
      const id = requestIdOf(qc.query.requestId);
      return id === undefined ? [] : [id];
    });
    if (ids.length === 0) return missing;
    // The multi-request read alongside, in the same batch.
    const [entries = [], multi] = await Promise.all([reader.readRequests?.({ chain: f.chain, verifierAddress: address, requestIds: ids }), this.multiDifferences(f, address)]);
    if (entries.some((e) => 'code' in e && TRANSIENT.has(e.code))) return undefined;
    const outcomes = rules.map((qc): OnChainRuleOutcome => ({
      objectId: qc.id, requestId: requestIdOf(qc.query.requestId)?.toString() ?? null, status: 'valid', is_valid: true, reasons: [],
      scenarioVerifierAddress: address, chain: f.chain, blockNumber: null,
    }));
    const checked = await check.apply(outcomes, rules, entries, f.scenario.trustedIssuers);
    const differences = [...missing, ...checked.filter((o) => o.requestId !== null && o.status === 'error').flatMap((o) => o.reasons)];
    return multi === undefined ? undefined : [...differences, ...multi];
  }

  /** Only a deployment that records the multi-request it sent must hold it: exactly that one, whatever the rules' order. */
  private async multiDifferences(f: Followed, address: string): Promise<string[] | undefined> {
    const expected = f.deployment.multiRequest;
    if (expected === undefined) return [];
    const { multiRequestDifferences } = await import('../chain/request-multi.js');
    const [entry] = await this.options.reader.readRequests?.({ chain: f.chain, verifierAddress: address, requestIds: [BigInt(expected.multiRequestId)] }) ?? [];
    if (entry !== undefined && 'code' in entry && TRANSIENT.has(entry.code)) return undefined;
    return multiRequestDifferences(expected, entry);
  }

  /**
   * A recorded multi-request whose setMultiRequest is not yet recorded (the deploy or recover() is on its way): no
   * verdict, until CHAIN_TX_DROP_AFTER_MS past the latest confirmed transaction's block; then a failure naming it.
   */
  private multiUnsent(d: SmartContractDeployment, txs: Transaction[]): Verdict | 'wait' | undefined {
    const multi = d.multiRequest;
    // An empty list: the verifier held it already, nothing was to send.
    if (multi === undefined || multi.transactions !== undefined) return undefined;
    const since = Math.max(0, ...txs.map((t) => (t.status === 'TxConfirmed' && typeof t.timestamp === 'number' ? t.timestamp : 0)));
    const waited = this.now() - since * 1000;
    if (waited < this.options.settings.txDropAfterMs) return 'wait';
    return {
      status: 'DeploymentFailed',
      errorMessage: clipped(`its multi-request ${multi.multiRequestId}'s setMultiRequest transaction was not recorded ${Math.round(waited / 1000)} s after setRequests was mined`),
    };
  }

  /** Transactions that a whole lap did not load are forgotten. */
  private forgetOthers(followed: Followed[], lapDone: boolean): void {
    for (const f of followed) {
      for (const t of f.deployment.transactions ?? []) {
        const seen = this.seen.get(this.key(f.chain, hashOf(t)));
        if (seen !== undefined) seen.lap = this.lap;
      }
    }
    if (!lapDone) return;
    for (const [key, seen] of this.seen) if (seen.lap !== this.lap) this.seen.delete(key);
    this.lap++;
  }
}
