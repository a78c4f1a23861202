/**
 * Deployment transitions a PATCH may make (states: docs/decisions.md, Deployment states). A `Deployed` deployment's
 * address never changes: a retry, redeployment or reorganisation is a new entry. Only new and changed entries are
 * checked, so stored values that predate these rules are left alone.
 */
import type { Static } from '@sinclair/typebox';
import type { Scenario, SmartContractDeployment as DeploymentSchema, Transaction as TransactionSchema } from '../schemas/scenario.js';
import { parseAddress } from './address.js';
import { canonicalJson } from './canonical-json.js';
import { isRecord as isObject } from '../schemas/json.js';

export type Transaction = Static<typeof TransactionSchema>;
/** The schema's `transactions` is a $ref, so its static type is spelled out here. */
export type SmartContractDeployment = Omit<Static<typeof DeploymentSchema>, 'transactions'> & { transactions?: Transaction[] };

export const DeploymentStatuses = ['DeploymentStarted', 'Deployed', 'DeploymentFailed', 'Deprecated'] as const;
export type DeploymentStatus = (typeof DeploymentStatuses)[number];

export const TransactionStatuses = ['TxPosted', 'TxConfirmed', 'TxFailed'] as const;
export type TransactionStatus = (typeof TransactionStatuses)[number];

/** An empty list marks a final status. */
export const DEPLOYMENT_TRANSITIONS: Readonly<Record<DeploymentStatus, readonly DeploymentStatus[]>> = Object.freeze({
  DeploymentStarted: ['Deployed', 'DeploymentFailed'],
  Deployed: ['Deprecated'],
  DeploymentFailed: [],
  Deprecated: [],
});

export const TRANSACTION_TRANSITIONS: Readonly<Record<TransactionStatus, readonly TransactionStatus[]>> = Object.freeze({
  TxPosted: ['TxConfirmed', 'TxFailed'],
  TxConfirmed: [],
  TxFailed: [],
});

const DEPLOYMENT_RANK: Record<DeploymentStatus, number> = { DeploymentStarted: 0, Deployed: 1, DeploymentFailed: 1, Deprecated: 2 };
const TRANSACTION_RANK: Record<TransactionStatus, number> = { TxPosted: 0, TxConfirmed: 1, TxFailed: 1 };

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** An EVM transaction hash; the follower asks the chain for no other (one malformed would fail its node's batch). */
export const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function isUsableDeployment(d: SmartContractDeployment | null | undefined): d is SmartContractDeployment & { address: string } {
  return d != null && d.status === 'Deployed' && typeof d.address === 'string' && EVM_ADDRESS.test(d.address);
}

export function unusableDeploymentReason(d: SmartContractDeployment): string | undefined {
  if (isUsableDeployment(d)) return undefined;
  const name = `deployment "${d.id}"`;
  if (d.status !== 'Deployed') {
    return d.status === undefined ? `${name} has no status` : `${name} is ${JSON.stringify(d.status)}, not Deployed`;
  }
  return d.address == null ? `${name} is Deployed but has no address` : `${name} has an address that is not an EVM address`;
}

type Rules = Scenario['queryConfigurations'];

/** The rules with the request ids a deployment set for them (rules it names no request for are kept as they are). */
export function withRequestIds(rules: Rules, requests: NonNullable<SmartContractDeployment['requests']>): Rules {
  const byRule = new Map(requests.map((r) => [r.queryConfigurationId, r.requestId]));
  return rules.map((qc) => {
    const id = byRule.get(qc.id);
    return id === undefined ? qc : { ...qc, query: { ...qc.query, requestId: id } };
  });
}

/**
 * Deployment `deploymentId`, now Deployed, supersedes the others: the rules take its request ids and every other
 * Deployed deployment becomes Deprecated. Null when it is not Deployed. The follower applies it in the very edit that
 * marks it Deployed, so executes never read the new rules against the old deployment or the reverse.
 */
export function supersedeWith<S extends Pick<Scenario, 'queryConfigurations' | 'smartContractDeployments'>>(input: S, deploymentId: string): S | null {
  const winner = input.smartContractDeployments.find((d) => d.id === deploymentId);
  if (winner?.status !== 'Deployed') return null;
  return {
    ...input,
    queryConfigurations: withRequestIds(input.queryConfigurations, winner.requests ?? []),
    smartContractDeployments: input.smartContractDeployments.map((d) => (d !== winner && d.status === 'Deployed' ? { ...d, status: 'Deprecated' as const } : d)),
  };
}

/** A lower bound for searching the verifier's event logs. */
export function deploymentBlock(d: SmartContractDeployment): number | undefined {
  let min: number | undefined;
  for (const t of d.transactions ?? []) {
    if (t.status === 'TxFailed' || typeof t.blockNumber !== 'number') continue;
    if (min === undefined || t.blockNumber < min) min = t.blockNumber;
  }
  return min;
}

export interface TransitionProblem {
  pointer: string;
  message: string;
}

function statusMessage(kind: 'deployment' | 'transaction', id: string, from: string, to: string, allowed: readonly string[], backwards: boolean): string {
  const what = `${kind} "${id}"`;
  if (backwards) return `${what} cannot move back from ${from} to ${to}`;
  if (allowed.length === 0) return `${what} is ${from}, a final status: it cannot become ${to} (record a new ${kind} instead)`;
  return `${what} cannot move from ${from} to ${to} (from ${from} it may become ${allowed.join(' or ')})`;
}

function checkStatus<S extends string>(
  kind: 'deployment' | 'transaction',
  id: string,
  before: unknown,
  after: unknown,
  pointer: string,
  all: readonly S[],
  transitions: Readonly<Record<S, readonly S[]>>,
  rank: Record<S, number>,
  problems: TransitionProblem[],
): void {
  if (after === undefined || after === null) {
    if (before !== undefined && before !== null) {
      problems.push({ pointer, message: `${kind} "${id}" had status ${String(before)}: a status cannot be removed` });
    }
    return;
  }
  if (after === before) return; // unchanged, even if it predates these rules
  const known = (s: unknown): s is S => typeof s === 'string' && hasOwn(transitions, s);
  if (!known(after)) {
    problems.push({ pointer, message: `status must be one of ${all.join(', ')} (got ${JSON.stringify(after)})` });
    return;
  }
  if (before === undefined || before === null || !known(before)) return; // new, or first status under these rules
  const allowed = transitions[before];
  if (allowed.includes(after)) return;
  problems.push({ pointer, message: statusMessage(kind, id, before, after, allowed, rank[after] < rank[before]) });
}

/** A PATCH cannot be matched by id when ids repeat. */
function byId<T extends { id: string }>(items: readonly T[], base: string, kind: string, problems: TransitionProblem[] | null): Map<string, T> {
  const map = new Map<string, T>();
  items.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || typeof item.id !== 'string') return;
    if (map.has(item.id)) {
      problems?.push({ pointer: `${base}/${i}/id`, message: `duplicate ${kind} id "${item.id}"` });
      return;
    }
    map.set(item.id, item);
  });
  return map;
}

function sameTransaction(a: Transaction | undefined, b: Transaction): boolean {
  if (a === undefined) return false;
  return a.status === b.status && a.txHash === b.txHash && a.smartContractDeploymentId === b.smartContractDeploymentId;
}

function checkTransactions(deploymentId: string, before: readonly Transaction[], after: readonly Transaction[], base: string, problems: TransitionProblem[]): void {
  const old = byId(before, base, 'transaction', null);
  byId(after, base, 'transaction', problems);
  after.forEach((t, i) => {
    if (t === null || typeof t !== 'object') return;
    const prior = old.get(t.id);
    if (sameTransaction(prior, t)) return;
    const pointer = `${base}/${i}`;
    checkStatus('transaction', t.id, prior?.status, t.status, `${pointer}/status`,
      TransactionStatuses, TRANSACTION_TRANSITIONS, TRANSACTION_RANK, problems);
    if (t.status === 'TxConfirmed' && (typeof t.txHash !== 'string' || t.txHash.length === 0)) {
      problems.push({ pointer: `${pointer}/txHash`, message: `transaction "${t.id}" is TxConfirmed, so it needs a txHash` });
    }
    // New or changed only: a stored hash from before this check stands.
    if (typeof t.txHash === 'string' && t.txHash !== prior?.txHash && !TX_HASH.test(t.txHash)) {
      problems.push({ pointer: `${pointer}/txHash`, message: `transaction "${t.id}": txHash must be a 0x-prefixed 32-byte hex hash (64 hex digits)` });
    }
    if (prior !== undefined && typeof prior.txHash === 'string' && prior.txHash !== t.txHash) {
      problems.push({ pointer: `${pointer}/txHash`, message: `transaction "${t.id}" already has a txHash: it cannot change (record a new transaction instead)` });
    }
    if (t.smartContractDeploymentId !== undefined && t.smartContractDeploymentId !== deploymentId) {
      problems.push({
        pointer: `${pointer}/smartContractDeploymentId`,
        message: `transaction "${t.id}" is listed under deployment "${deploymentId}" but names deployment "${t.smartContractDeploymentId}"`,
      });
    }
  });
}

/** Pointers are relative to the Scenario. */
export function checkDeploymentTransitions(
  before: readonly SmartContractDeployment[] | null | undefined,
  after: readonly SmartContractDeployment[] | null | undefined,
): TransitionProblem[] {
  const problems: TransitionProblem[] = [];
  if (!Array.isArray(after)) return problems;
  const base = '/smartContractDeployments';
  const old = byId(Array.isArray(before) ? before : [], base, 'deployment', null);
  byId(after, base, 'deployment', problems);
  after.forEach((d, i) => {
    if (d === null || typeof d !== 'object') return;
    const prior = old.get(d.id);
    const pointer = `${base}/${i}`;
    const statusChanged = prior?.status !== d.status;
    const addressChanged = (prior?.address ?? null) !== (d.address ?? null);
    if (prior === undefined || statusChanged || addressChanged) {
      checkStatus('deployment', d.id, prior?.status, d.status, `${pointer}/status`,
        DeploymentStatuses, DEPLOYMENT_TRANSITIONS, DEPLOYMENT_RANK, problems);
      if (d.status === 'Deployed') {
        if (typeof d.address !== 'string' || d.address.length === 0) {
          problems.push({ pointer: `${pointer}/address`, message: `deployment "${d.id}" is Deployed, so it needs the contract address` });
        } else {
          const parsed = parseAddress({ address: d.address, namespace: 'eip155' });
          if (!parsed.ok) problems.push({ pointer: `${pointer}/address`, message: `deployment "${d.id}": ${parsed.message} (expected an EVM 0x address)` });
        }
      }
      const wasDeployed = prior !== undefined && (prior.status === 'Deployed' || prior.status === 'Deprecated');
      if (wasDeployed && addressChanged && typeof prior.address === 'string') {
        problems.push({
          pointer: `${pointer}/address`,
          message: `deployment "${d.id}" was ${prior.status} at ${prior.address}: its address cannot change (record a new deployment instead)`,
        });
      }
    }
    const txs = Array.isArray(d.transactions) ? d.transactions : [];
    const oldTxs = prior !== undefined && Array.isArray(prior.transactions) ? prior.transactions : [];
    checkTransactions(d.id, oldTxs, txs, `${pointer}/transactions`, problems);
  });
  return problems;
}

/**
 * A PATCH that rewrites `smartContractDeployments` in the seed's shape (without `multiRequest`) keeps the stored one:
 * a merge patch replaces the whole array, and the field is not the client's to carry.
 */
export function keepServiceFields(before: readonly SmartContractDeployment[] | null | undefined, merged: unknown): unknown {
  const after: unknown = isObject(merged) ? merged.smartContractDeployments : undefined;
  if (!isObject(merged) || !Array.isArray(after) || !Array.isArray(before)) return merged;
  const stored = new Map(before.filter((d) => d?.multiRequest !== undefined).map((d) => [d.id, d.multiRequest]));
  if (stored.size === 0) return merged;
  const kept = after.map((d: unknown) => (isObject(d) && d.multiRequest === undefined && typeof d.id === 'string' && stored.has(d.id) ? { ...d, multiRequest: stored.get(d.id) } : d));
  return { ...merged, smartContractDeployments: kept };
}

/**
 * The fields only the service writes (a deployment's `multiRequest`): a PATCH or create that sets, changes or removes
 * one is refused. Not part of checkDeploymentTransitions, which the service's own writes pass through too.
 */
export function checkServiceFields(
  before: readonly SmartContractDeployment[] | null | undefined,
  after: readonly SmartContractDeployment[] | null | undefined,
): TransitionProblem[] {
  if (!Array.isArray(after)) return [];
  const old = byId(Array.isArray(before) ? before : [], '', 'deployment', null);
  return after.flatMap((d, i) => {
    if (d === null || typeof d !== 'object') return [];
    const stored = old.get(d.id)?.multiRequest;
    // Key order is not content: PostgreSQL's JSONB hands keys back in its own order, a client in another.
    if (canonicalJson(d.multiRequest ?? null) === canonicalJson(stored ?? null)) return [];
    return [{
      pointer: `/smartContractDeployments/${i}/multiRequest`,
      message: `deployment "${d.id}": multiRequest is written by POST …/deployments only; a PATCH cannot ${stored === undefined ? 'set' : 'change or remove'} it`,
    }];
  });
}
