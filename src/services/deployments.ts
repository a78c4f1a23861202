/**
 * Deploying a scenario's rules to a UniversalVerifier with the service's key. A send's nonce is taken under the
 * database's lock of its (chain, sender) row, and the signed transaction is stored before it is broadcast: a restart
 * sends the stored one again (recover) and never signs another for the same deployment. Following the transaction
 * to Deployed is not done here: the follower applies supersedeWith() in the edit that marks a deployment Deployed.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import createError from '@fastify/error';
import type { FastifyBaseLogger } from 'fastify';
import type { Address, Hex } from 'viem';
import type { ChainSettings } from '../chain/config.js';
import { forChain, type DeploySettings } from '../chain/deploy-config.js';
import type { SendPlan } from '../chain/deploy-plan.js';
import type { BuiltRequests, MultiRequest } from '../chain/deploy-requests.js';
import type { DeployerChain, UnsignedSend } from '../chain/deploy-sender.js';
import type { RequestMatchOptions } from '../chain/request-match.js';
import { supersedeWith, withRequestIds, type SmartContractDeployment, type Transaction } from '../domain/deployments.js';
import { KeyedQueue } from '../domain/keyed-queue.js';
import type { PlanCache } from '../domain/plan-cache.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ChainSend, ChainSendRepository, ScenarioRepository, ScenarioRow } from '../store/types.js';
import type { FieldError } from '../schemas/problem.js';
import type { Access } from './access.js';
import { Conflict, InvalidScenario, ScenarioNotFound } from './errors.js';
import type { DeploymentRecorder } from './deployment-records.js';
import { findScenarioIn } from './scenarios.js';

const NotOnChain = createError<[string, string]>('SCS_NOT_ONCHAIN', 'Scenario %s is %s: only OnChainZKP scenarios are deployed to a verifier', 409);
const DeployerMissing = createError<[string]>('SCS_DEPLOYER_NOT_CONFIGURED', '%s', 409);
const DeployRefused = createError<[string]>('SCS_DEPLOY_REFUSED', '%s', 422);
const HeldByVerifierError = createError<[string]>('SCS_HELD_BY_VERIFIER', '%s', 422);
/** A rule's request or group that the verifier holds otherwise (setRequests cannot overwrite it): the fields to change. */
class HeldByVerifier extends HeldByVerifierError {
  constructor(readonly errors: FieldError[], message: string) {
    super(message);
  }
}
const FeeTooHigh = createError<[string]>('SCS_FEE_TOO_HIGH', '%s', 409);
const DeployerUnderfunded = createError<[string]>('SCS_DEPLOYER_UNDERFUNDED', '%s', 409);
/** Nothing was sent that is not stored: the deploy may be asked again. */
class ChainUnavailable extends createError<[string]>('SCS_CHAIN_UNAVAILABLE', '%s', 503) {
  readonly retryAfterSeconds = 5;
}
const DeploymentNotFound = createError<[string, string]>('SCS_DEPLOYMENT_NOT_FOUND', 'Scenario %s has no deployment %s', 404);

/** Who writes the deployment's revisions. */
const BALANCE_TTL_MS = 30_000;
const SHORTFALL_WAIT_MS = 2000;

export interface DeployBody {
  chain?: string;
  verifier?: string;
  validators?: string[];
}

/** One incarnation of a scenario (`seq`), as DeploymentRecorder's RecordTarget names it. */
export interface DeploymentTarget {
  id: string;
  projectId: string | null;
  seq: number;
}

/** A send's purpose (chain_sends.purpose): enough to record it after a restart. */
interface Purpose {
  scenario: DeploymentTarget;
  deploymentId: string;
  verifier: Address;
  rules: BuiltRequests['rules'];
  /** The multi-request the deployment sends after setRequests, as recorded on it. */
  multiRequest?: RecordedMultiRequest;
  /** Set on the setMultiRequest send: its transaction is the multi-request's. */
  call?: 'setMultiRequest';
  /** On the setRequests send: the setMultiRequest priced with it, reserved before it is recorded (so recover() sends it too). */
  then?: UnsignedSend;
}

type RecordedMultiRequest = NonNullable<SmartContractDeployment['multiRequest']>;

const recordedMulti = (m: MultiRequest): RecordedMultiRequest => ({
  multiRequestId: String(m.multiRequestId), requestIds: m.requestIds.map(String), groupIds: m.groupIds.map(String),
});

/** A transfer to itself that takes the nonce of a send the node refused for good; recorded in no deployment. */
interface FillerPurpose {
  fills: string;
}

const isFiller = (purpose: Purpose | FillerPurpose): purpose is FillerPurpose => 'fills' in purpose;

export interface DeploymentServiceOptions {
  store: ScenarioRepository & ChainSendRepository;
  deploy: DeploySettings;
  chains: ChainSettings;
  requests: RequestMatchOptions;
  plans: PlanCache;
  now: () => number;
  /** Writes every deployment change (a revision and its webhook). */
  recorder: Pick<DeploymentRecorder, 'record'>;
  /** Where a send's failure in recover() or replaceStuck() is said (its text sanitised: no RPC URL). */
  log?: Pick<FastifyBaseLogger, 'warn'>;
  /** Test hook: after the signed send is stored, before it is broadcast; a throw stands for a crash there. */
  beforeBroadcast?: (send: ChainSend) => void | Promise<void>;
  /** Test hook: before the setMultiRequest that setRequests `send` carries is reserved. */
  beforeFollowUp?: (send: ChainSend) => void | Promise<void>;
}

export interface DeployerShortfall {
  chain: string;
  address: string;
  balanceWei: string;
  neededWei: string;
}

const transactionsOf = (d: SmartContractDeployment): Transaction[] => d.transactions ?? [];

export class DeploymentService {
  private readonly deployers = new Map<string, Promise<DeployerChain>>();
  private shortfall?: { at: number; value: Promise<DeployerShortfall[]> };
  private lastShortfall: DeployerShortfall[] = [];
  private readonly queue = new KeyedQueue();
  /** Stuck sends the fee cap keeps from a replacement: said once each. */
  private readonly unbumpable = new Set<string>();
  private readonly foreign = new Set<string>();

  constructor(private readonly options: DeploymentServiceOptions) {}

  private deployer(chain: string): Promise<DeployerChain> {
    let found = this.deployers.get(chain);
    if (found === undefined) {
      const endpoint = this.options.chains.chains.get(chain);
      const key = forChain(this.options.deploy.keys, chain);
      if (endpoint === undefined) throw new DeployerMissing(`No RPC endpoint is configured for chain ${chain}: add it to CHAIN_RPC_URLS`);
      if (key === undefined) {
        throw new DeployerMissing(`No deployer key is configured for chain ${chain}: set CHAIN_DEPLOYER_KEY (or CHAIN_DEPLOYER_KEY_FILE), ` +
          `one key or ${chain}=<key>, to let the service sign its setRequests transactions`);
      }
      found = import('../chain/deploy-sender.js').then(({ DeployerChain }) => new DeployerChain(endpoint, key, this.options.deploy.maxFeePerGas, this.options.deploy.maxGas, this.options.chains.timeoutMs));
      this.deployers.set(chain, found);
    }
    return found;
  }

  /** Deploys of one scenario here run one after the other: the second sees the first's deployment and is refused. */
  deploy(access: Access, scenarioId: string, body: DeployBody): Promise<{ deployment: SmartContractDeployment; row: ScenarioRow }> {
    return this.queue.run(scenarioId, () => this.deployNow(access, scenarioId, body));
  }

  private async deployNow(access: Access, scenarioId: string, body: DeployBody): Promise<{ deployment: SmartContractDeployment; row: ScenarioRow }> {
    const readAt = this.at();
    const row = await findScenarioIn(this.options.store, access, scenarioId);
    if (row.input.type !== 'OnChainZKP') throw new NotOnChain(scenarioId, row.input.type);
    const chain = body.chain ?? this.options.chains.defaultChain;
    if (chain === undefined) throw new DeployerMissing('No chain named and no default chain (CHAIN_DEFAULT, CHAIN_RPC_URLS): name one in the body\'s `chain`');
    const deployer = await this.deployer(chain);
    // The service's key pays and signs: a body only picks among the contracts the operator listed for the chain.
    const allowedVerifier = forChain(this.options.deploy.verifiers, chain);
    const allowedValidators = forChain(this.options.deploy.validators, chain) ?? [];
    if (body.verifier !== undefined && body.verifier.toLowerCase() !== allowedVerifier) {
      throw new DeployRefused(`body.verifier ${body.verifier} is not the verifier CHAIN_VERIFIER_ADDRESS lists for ${chain}: the service's key calls no other contract`);
    }
    const unlisted = (body.validators ?? []).filter((v) => !allowedValidators.includes(v.toLowerCase() as Address));
    if (unlisted.length > 0) {
      throw new DeployRefused(`body.validators ${unlisted.join(', ')} ${unlisted.length === 1 ? 'is' : 'are'} not among CHAIN_VALIDATORS for ${chain}`);
    }
    const verifier = allowedVerifier as Address | undefined;
    if (verifier === undefined) throw new DeployerMissing(`No verifier configured for ${chain}: set CHAIN_VERIFIER_ADDRESS (${chain}=0x… or one for every chain)`);
    const validators = (body.validators?.map((v) => v.toLowerCase()) ?? allowedValidators) as Address[];
    if (validators.length === 0) throw new DeployerMissing(`No request validators configured for ${chain}: set CHAIN_VALIDATORS`);

    const { buildRequests, RequestBuildError } = await import('../chain/deploy-requests.js');
    const { DeployRefusal } = await import('../chain/deploy-sender.js');
    const { planSends, HeldConflict } = await import('../chain/deploy-plan.js');
    let built: BuiltRequests;
    let unsigned: UnsignedSend | undefined;
    let then: UnsignedSend | undefined;
    let plan: SendPlan;
    try {
      const circuits = await deployer.validatorCircuits(validators);
      built = await buildRequests(row.input.queryConfigurations, {
        ...this.options.requests, trustedIssuers: row.input.trustedIssuers, validators: circuits, creator: deployer.address,
      });
      refuseSame(scenarioId, row.input, chain, verifier, built.rules);
      // The requests, groups and multi-request the verifier holds as the rules make them are reused, not sent again.
      plan = planSends(row.input.queryConfigurations, built, await deployer.held(verifier, built), verifier);
      const multi = plan.multi === 'send' ? built.multiRequest : undefined;
      if (plan.requests.length > 0) {
        unsigned = await deployer.prepare(verifier, plan.requests);
        // Both priced before setRequests takes its nonce: a refusal never leaves it alone on chain.
        if (multi !== undefined) then = await deployer.prepareMulti(verifier, multi, BigInt(unsigned.gas) * BigInt(unsigned.maxFeePerGas));
      } else if (multi !== undefined) {
        unsigned = await deployer.prepareMultiAlone(verifier, multi);
      }
    } catch (err) {
      if (err instanceof RequestBuildError) {
        throw new InvalidScenario([{ field: `body.input${(err.pointer ?? '').replace(/\//g, '.')}`, pointer: `/input${err.pointer ?? ''}`, message: err.message }],
          `The scenario cannot be deployed: ${err.message}`);
      }
      if (err instanceof HeldConflict) {
        throw new HeldByVerifier(err.problems.map((p) => ({ field: `body.input${p.pointer.replace(/\//g, '.')}`, pointer: `/input${p.pointer}`, message: p.message })),
          `The verifier holds ${err.problems.length === 1 ? 'a request or group' : 'requests or groups'} of these rules otherwise than they are now: ${err.problems[0]!.message}`);
      }
      if (err instanceof DeployRefusal) {
        throw err.kind === 'fee' ? new FeeTooHigh(err.message) : err.kind === 'funds' ? new DeployerUnderfunded(err.message) : new DeployRefused(err.message);
      }
      throw chainError(err, chain);
    }
    const deploymentId = `deploy-${randomUUID()}`;
    const multiAlone = plan.requests.length === 0 && plan.multi === 'send';
    const purpose: Purpose = {
      scenario: targetOf(row), deploymentId, verifier, rules: built.rules,
      ...(built.multiRequest && then && { multiRequest: recordedMulti(built.multiRequest), then }),
      ...(built.multiRequest && multiAlone && { multiRequest: recordedMulti(built.multiRequest), call: 'setMultiRequest' as const }),
      // Held already: none of its transactions sends it.
      ...(built.multiRequest && plan.multi === 'held' && { multiRequest: { ...recordedMulti(built.multiRequest), transactions: [] } }),
    };
    if (unsigned === undefined) return this.recordHeld(scenarioId, chain, purpose);
    const sendId = randomUUID();
    // Under the sender's lock: an open send of the same call (another instance's deploy of these rules) is not sent twice,
    // nor one that became mined since the row was read (that deploy ended after `same` above looked).
    const sameCall = (open: ChainSend) => {
      const other = JSON.parse(open.request) as UnsignedSend;
      return other.to.toLowerCase() === unsigned.to.toLowerCase() && other.data === unsigned.data;
    };
    const send = await this.options.store.reserveSend({
      id: sendId, chain, sender: deployer.address.toLowerCase(), request: JSON.stringify(unsigned), purpose: JSON.stringify(purpose),
      createdAt: this.at(),
    }, await deployer.nonce('pending').catch((err: unknown) => Promise.reject(chainError(err, chain))), sameCall, readAt);
    if (send.id !== sendId) {
      const other = JSON.parse(send.purpose) as Purpose | FillerPurpose;
      throw new Conflict(`Scenario ${scenarioId}'s rules are being deployed already: deployment "${isFiller(other) ? '?' : other.deploymentId}" ` +
        `(its transaction is ${send.state === 'mined' ? 'mined' : 'on its way'})`);
    }
    const recorded = await this.carryOn(deployer, send);
    const deployment = recorded?.input.smartContractDeployments.find((d) => d.id === deploymentId);
    if (recorded === undefined || deployment === undefined) throw new ScenarioNotFound(scenarioId);
    return { deployment, row: recorded };
  }

  /**
   * Nothing to send: the verifier holds every request (and the multi-request) as the rules make them, e.g. after a
   * retire, or another scenario's deploy of the same rules. A deployment without transactions, DeploymentStarted:
   * the follower decides it by reading the verifier alone.
   */
  private async recordHeld(scenarioId: string, chain: string, purpose: Purpose): Promise<{ deployment: SmartContractDeployment; row: ScenarioRow }> {
    // Another deploy of these rules on its way (its send stored, not yet recorded): the chain holds its requests. A
    // recorded one is in the scenario, where refuseSame() judges it by its status.
    for (const open of await this.options.store.openSends()) {
      const other = JSON.parse(open.purpose) as Purpose | FillerPurpose;
      if (open.state !== 'recorded' && !isFiller(other) && other.scenario.id === scenarioId && requestsKey(other.rules) === requestsKey(purpose.rules)) {
        throw new Conflict(`Scenario ${scenarioId}'s rules are being deployed already: deployment "${other.deploymentId}" (its transaction is on its way)`);
      }
    }
    const row = await this.recordDeployment(purpose.scenario, purpose.deploymentId, (input) => {
      refuseSame(scenarioId, input, chain, purpose.verifier, purpose.rules);
      return withDeployment(input, newDeployment(purpose, chain, []));
    });
    const deployment = row?.input.smartContractDeployments.find((d) => d.id === purpose.deploymentId);
    if (row === undefined || deployment === undefined) throw new ScenarioNotFound(scenarioId);
    return { deployment, row };
  }

  /** Signs a reserved send, broadcasts a signed one, records a broadcast one: from wherever a crash left it. */
  private async carryOn(deployer: DeployerChain, stored: ChainSend): Promise<ScenarioRow | undefined> {
    const send = { ...stored };
    if (send.state === 'reserved') {
      const signed = await deployer.sign(JSON.parse(send.request) as UnsignedSend, send.nonce);
      await this.options.store.signSend(send.id, signed.raw, signed.hash, this.at());
      Object.assign(send, { raw: signed.raw, txHash: signed.hash, state: 'signed' });
    }
    if (send.state === 'signed') {
      await this.options.beforeBroadcast?.(send);
      // Signed and stored, it is this deployment's transaction whatever the node said (a timeout may hide a send):
      // recorded, and sent again by replaceStuck() until its nonce is used. Recording nothing would let a retried
      // deploy sign a second one. Only a refusal for good is not: another transaction fills its nonce.
      const refusal = await deployer.broadcast(send.raw as Hex).then(
        async () => { await this.options.store.moveSend(send.id, ['signed'], 'broadcast', this.at()); },
        async (err: unknown) => ((await import('../chain/deploy-sender.js')).refusedForGood(err) ? err : undefined),
      );
      if (refusal !== undefined) {
        const why = await errorText(refusal, send.chain);
        this.options.log?.warn({ chain: send.chain, nonce: send.nonce, send: send.id, err: why }, 'the node refused a deploy transaction for good');
        if (send.replaces !== null && !isFiller(JSON.parse(send.purpose) as Purpose | FillerPurpose)) {
          // A higher fee refused: the transaction it replaces still holds the nonce and is followed again.
          await this.options.store.moveSend(send.id, ['signed'], 'failed', this.at());
          await this.options.store.moveSend(send.replaces, ['replaced'], 'recorded', this.at());
        } else if (send.replaces === null) {
          await this.fill(deployer, send);
        }
        throw new DeployRefused(`The node refused the deploy transaction: ${why}`);
      }
    } else if (send.state !== 'broadcast') {
      return undefined;
    }
    const purpose = JSON.parse(send.purpose) as Purpose | FillerPurpose;
    const row = isFiller(purpose) ? undefined : await this.recordSend(send);
    // Reserved before setRequests' send is closed: a crash in between leaves that open, and recover() comes back here.
    const next = isFiller(purpose) || row === undefined ? undefined : await this.reserveFollowUp(deployer, send, purpose, row);
    await this.options.store.moveSend(send.id, ['signed', 'broadcast'], 'recorded', this.at());
    if (next === undefined) return row;
    // setRequests is on its way: a failure here is logged, and recover() or the carry-on timer sends it later.
    return (await this.carryOn(deployer, next).catch(async (err: unknown) => {
      this.options.log?.warn({ chain: send.chain, deployment: (purpose as Purpose).deploymentId, err: await errorText(err, send.chain) },
        'the deployment\'s setMultiRequest is stored but not sent yet; will retry');
      return undefined;
    })) ?? row;
  }

  /** The setMultiRequest a setRequests send carries, reserved once (none when it is open or recorded already). */
  private async reserveFollowUp(deployer: DeployerChain, send: ChainSend, purpose: Purpose, row: ScenarioRow): Promise<ChainSend | undefined> {
    if (purpose.then === undefined || purpose.call === 'setMultiRequest') return undefined;
    const d = row.input.smartContractDeployments.find((x) => x.id === purpose.deploymentId);
    if (d === undefined || (d.multiRequest?.transactions ?? []).length > 0) return undefined;
    const { then, ...rest } = purpose;
    // setRequests is on its way already: a node that does not answer now must not fail the deploy (the stored next
    // nonce, after setRequests's, is the floor anyway).
    const chainNonce = await deployer.nonce('pending').catch(() => send.nonce + 1);
    await this.options.beforeFollowUp?.(send);
    const id = randomUUID();
    // One step under the sender's lock: the check for this deployment's setMultiRequest (open, or mined since its
    // setRequests was stored) and the reservation. Two instances carrying the same setRequests reserve one.
    const ours = (o: ChainSend) => {
      const p = JSON.parse(o.purpose) as Purpose | FillerPurpose;
      return !isFiller(p) && p.deploymentId === purpose.deploymentId && p.call === 'setMultiRequest';
    };
    const reserved = await this.options.store.reserveSend({
      id, chain: send.chain, sender: send.sender, request: JSON.stringify(then),
      purpose: JSON.stringify({ ...rest, call: 'setMultiRequest' } satisfies Purpose), createdAt: this.at(),
    }, chainNonce, ours, send.createdAt);
    return reserved.id === id || (reserved.state !== 'recorded' && reserved.state !== 'mined') ? reserved : undefined;
  }

  /**
   * The refused send becomes failed and a zero-value transfer to itself takes its nonce, sent like any other (then
   * followed by replaceStuck() until mined): else the nonce stays unused and every later send waits behind it.
   */
  private async fill(deployer: DeployerChain, refused: ChainSend): Promise<void> {
    // A chain that does not answer now leaves the refused send signed: recover() meets the refusal again and fills then.
    const request = await deployer.filler().catch(async (err: unknown) => {
      this.options.log?.warn({ chain: refused.chain, nonce: refused.nonce, err: await errorText(err, refused.chain) }, 'the transfer filling a refused nonce was not prepared; will retry');
    });
    if (request === undefined) return;
    const signed = await deployer.sign(request, refused.nonce);
    const at = this.at();
    const filler: ChainSend = {
      ...refused, id: randomUUID(), request: JSON.stringify(request), purpose: JSON.stringify({ fills: refused.id } satisfies FillerPurpose),
      raw: signed.raw, txHash: signed.hash, state: 'signed', replaces: refused.id, createdAt: at, updatedAt: at,
    };
    if (!(await this.options.store.replaceSend(refused.id, filler, 'failed'))) return;
    await this.carryOn(deployer, filler).catch(async (err: unknown) => {
      this.options.log?.warn({ chain: refused.chain, nonce: refused.nonce, err: await errorText(err, refused.chain) }, 'the transfer filling a refused nonce was not sent; will retry');
    });
  }

  /** The send's transaction in its deployment (a new deployment for the first, appended for a replacement). */
  private recordSend(send: ChainSend): Promise<ScenarioRow | undefined> {
    const purpose = JSON.parse(send.purpose) as Purpose;
    return this.recordDeployment(purpose.scenario, purpose.deploymentId, (input) => {
      const deployments = input.smartContractDeployments;
      const existing = deployments.find((d) => d.id === purpose.deploymentId);
      if (existing !== undefined && transactionsOf(existing).some((t) => t.txHash === send.txHash)) return null;
      if (existing !== undefined) {
        const tx = transaction(purpose.deploymentId, transactionsOf(existing).length + 1, send.txHash as string);
        const multi = existing.multiRequest;
        // A replacement of the setMultiRequest send carries its purpose: each of its transactions is named.
        const multiRequest = purpose.call === 'setMultiRequest' && multi !== undefined ? { multiRequest: { ...multi, transactions: [...(multi.transactions ?? []), tx.id] } } : {};
        return {
          ...input, smartContractDeployments: deployments.map((d) => (d === existing ? { ...d, transactions: [...transactionsOf(d), tx], ...multiRequest } : d)),
        };
      }
      return withDeployment(input, newDeployment(purpose, send.chain, [transaction(purpose.deploymentId, 1, send.txHash as string)]));
    });
  }

  /**
   * The one place deployment changes are written: the recorder's revision and `deployment.updated` event. `edit`
   * answers null when there is nothing to write; then the scenario as it is. Undefined: the scenario is gone.
   */
  async recordDeployment(target: DeploymentTarget, deploymentId: string, edit: (input: Scenario) => Scenario | null): Promise<ScenarioRow | undefined> {
    const written = await this.options.recorder.record(target, deploymentId, edit);
    if (written !== null) return written;
    return (await this.options.store.find(target.id, [target.projectId ?? ''])).find((r) => r.seq === target.seq);
  }

  /**
   * For the follower, once deployment `deploymentId` is Deployed: the rules take its requestIds, and every other
   * Deployed deployment of the scenario becomes Deprecated.
   */
  supersede(target: DeploymentTarget, deploymentId: string): Promise<ScenarioRow | undefined> {
    return this.recordDeployment(target, deploymentId, (input) => supersedeWith(input, deploymentId));
  }

  async find(access: Access, scenarioId: string, deploymentId: string): Promise<SmartContractDeployment> {
    const row = await findScenarioIn(this.options.store, access, scenarioId);
    const found = row.input.smartContractDeployments.find((d) => d.id === deploymentId);
    if (found === undefined) throw new DeploymentNotFound(scenarioId, deploymentId);
    return found;
  }

  /** A Deployed deployment becomes Deprecated; any other status is refused (409). */
  async retire(access: Access, scenarioId: string, deploymentId: string): Promise<SmartContractDeployment> {
    const row = await findScenarioIn(this.options.store, access, scenarioId);
    let refusal: string | undefined;
    const written = await this.recordDeployment(targetOf(row), deploymentId, (input) => {
      const d = input.smartContractDeployments.find((x) => x.id === deploymentId);
      if (d === undefined) throw new DeploymentNotFound(scenarioId, deploymentId);
      if (d.status === 'Deprecated') return null;
      if (d.status !== 'Deployed') {
        refusal = `Deployment "${deploymentId}" is ${d.status ?? 'without status'}: only a Deployed one can be retired`;
        return null;
      }
      return { ...input, smartContractDeployments: input.smartContractDeployments.map((x) => (x === d ? { ...x, status: 'Deprecated' } : x)) };
    });
    if (refusal !== undefined) throw new Conflict(refusal);
    const d = written?.input.smartContractDeployments.find((x) => x.id === deploymentId);
    if (d === undefined) throw new DeploymentNotFound(scenarioId, deploymentId);
    return d;
  }

  /**
   * Every stored send not yet recorded is carried on (signed with its own nonce, sent again, recorded): at start all
   * of them, later only those untouched for `olderThanMs` (a deploy of another instance may be on its way).
   */
  async recover(olderThanMs = 0): Promise<number> {
    let carried = 0;
    for (const send of await this.options.store.openSends()) {
      if (send.state === 'recorded' || this.options.now() - Date.parse(send.updatedAt) < olderThanMs) continue;
      // One send's failure never stops the others.
      try {
        const deployer = await this.deployer(send.chain);
        if (!this.ownSend(deployer, send)) continue;
        await this.carryOn(deployer, send);
        carried++;
      } catch (err) {
        this.options.log?.warn({ chain: send.chain, nonce: send.nonce, send: send.id, err: await errorText(err, send.chain) }, 'a stored deploy transaction was not carried on; will retry');
      }
    }
    return carried;
  }

  /**
   * Closes sends whose nonce the chain has used, sends again those the node may have dropped, and replaces those
   * pending longer than CHAIN_REPLACE_AFTER_MS: the same nonce, fees up an eighth (the nodes' minimum bump is a
   * tenth), never above CHAIN_MAX_FEE_PER_GAS. The follower may call it; the app runs it on a timer too.
   */
  async replaceStuck(): Promise<number> {
    let replaced = 0;
    const latest = new Map<string, number>();
    for (const send of await this.options.store.openSends()) {
      if (send.state !== 'recorded' && send.state !== 'broadcast') continue;
      try {
        if (await this.replaceOne(send, latest)) replaced++;
      } catch (err) {
        this.options.log?.warn({ chain: send.chain, nonce: send.nonce, send: send.id, err: await errorText(err, send.chain) }, 'a pending deploy transaction was not checked; will retry');
      }
    }
    return replaced;
  }

  /** True when it was replaced. */
  private async replaceOne(send: ChainSend, latest: Map<string, number>): Promise<boolean> {
    const { replaceAfterMs, maxFeePerGas } = this.options.deploy;
    const deployer = await this.deployer(send.chain);
    if (!this.ownSend(deployer, send)) return false;
    const key = `${send.chain}|${send.sender}`;
    if (!latest.has(key)) latest.set(key, await deployer.nonce('latest'));
    if (send.nonce < (latest.get(key) ?? 0)) {
      await this.options.store.moveSend(send.id, ['broadcast', 'recorded'], 'mined', this.at());
      return false;
    }
    await deployer.broadcast(send.raw as Hex);
    if (replaceAfterMs === 0 || this.options.now() - Date.parse(send.updatedAt) < replaceAfterMs) return false;
    const old = JSON.parse(send.request) as UnsignedSend;
    const bump = (v: string) => (BigInt(v) * 9n) / 8n + 1n;
    if (BigInt(old.maxFeePerGas) >= maxFeePerGas) return false;
    const current = await deployer.fees().catch(() => undefined);
    let fee = bump(old.maxFeePerGas);
    if (current !== undefined && current.maxFeePerGas > fee) fee = current.maxFeePerGas;
    if (fee > maxFeePerGas) fee = maxFeePerGas;
    const tip = bump(old.maxPriorityFeePerGas) > fee ? fee : bump(old.maxPriorityFeePerGas);
    // Nodes take a replacement only when both rise a tenth: a smaller bump (the cap near) is refused, so not sent.
    const tenthUp = (next: bigint, prev: string) => next * 10n >= BigInt(prev) * 11n;
    if (!tenthUp(fee, old.maxFeePerGas) || !tenthUp(tip, old.maxPriorityFeePerGas)) {
      if (!this.unbumpable.has(send.id)) {
        this.unbumpable.add(send.id);
        this.options.log?.warn({ chain: send.chain, nonce: send.nonce, send: send.id, maxFeePerGas: String(fee) },
          'a stuck deploy transaction is not replaced: CHAIN_MAX_FEE_PER_GAS leaves less than the tenth more a node requires');
      }
      return false;
    }
    const request: UnsignedSend = { ...old, maxFeePerGas: String(fee), maxPriorityFeePerGas: String(tip) };
    const signed = await deployer.sign(request, send.nonce);
    const at = this.at();
    const replacement: ChainSend = {
      ...send, id: randomUUID(), request: JSON.stringify(request), raw: signed.raw, txHash: signed.hash, state: 'signed', replaces: send.id, createdAt: at, updatedAt: at,
    };
    if (!(await this.options.store.replaceSend(send.id, replacement))) return false;
    await this.carryOn(deployer, replacement);
    return true;
  }

  /**
   * A send of another sender (the key rotated since) is never signed or replaced with this key: its nonce is not this
   * key's. Said once per send; the old key's owner settles it.
   */
  private ownSend(deployer: DeployerChain, send: ChainSend): boolean {
    if (send.sender === deployer.address.toLowerCase()) return true;
    if (!this.foreign.has(send.id)) {
      this.foreign.add(send.id);
      this.options.log?.warn({ chain: send.chain, nonce: send.nonce, send: send.id, sender: send.sender },
        'an open deploy transaction of another sender (the deployer key changed) is left alone');
    }
    return false;
  }

  /** The deployers that cannot pay for one more deployment (DEPLOY_GAS_BUDGET at the current fees); kept 30 s. */
  deployerShortfalls(): Promise<DeployerShortfall[]> {
    const now = this.options.now();
    if (this.shortfall !== undefined && now - this.shortfall.at < BALANCE_TTL_MS) return this.shortfall.value;
    // A chain slow to answer never holds up readiness: the last answer stands meanwhile.
    const last = this.lastShortfall;
    const fresh = this.readShortfalls(now);
    return Promise.race([fresh, sleep(SHORTFALL_WAIT_MS, undefined, { ref: false }).then(() => last)]);
  }

  private readShortfalls(now: number): Promise<DeployerShortfall[]> {
    const value = (async () => {
      const { DEPLOY_GAS_BUDGET } = await import('../chain/deploy-sender.js');
      const out: DeployerShortfall[] = [];
      for (const chain of this.options.chains.chains.keys()) {
        if (forChain(this.options.deploy.keys, chain) === undefined) continue;
        try {
          const deployer = await this.deployer(chain);
          const [balance, fees] = await Promise.all([deployer.balance(), deployer.fees().catch(() => ({ maxFeePerGas: this.options.deploy.maxFeePerGas }))]);
          const needed = DEPLOY_GAS_BUDGET * fees.maxFeePerGas;
          if (balance < needed) out.push({ chain, address: deployer.address, balanceWei: String(balance), neededWei: String(needed) });
        } catch { /* a chain that does not answer: the reads' errors say so */ }
      }
      this.lastShortfall = out;
      return out;
    })();
    this.shortfall = { at: now, value };
    return value;
  }

  get configured(): boolean {
    return this.options.deploy.keys.size > 0;
  }

  private at(): string {
    return new Date(this.options.now()).toISOString();
  }
}

/** Loads viem's error classes only once a chain error is to be said. */
const errorText = async (err: unknown, chain: string) => (await import('../chain/rpc-errors.js')).chainErrorText(err, chain);

const targetOf = (row: ScenarioRow): DeploymentTarget => ({ id: row.id, projectId: row.input.projectId ?? null, seq: row.seq });

/** Key order apart (PostgreSQL's JSONB reorders keys). */
const requestsKey = (rules: BuiltRequests['rules']) => rules.map((r) => `${r.queryConfigurationId}=${r.requestId}`).join('|');

/** 409 when a deployment on its way or Deployed sets these very requests on the verifier. */
function refuseSame(scenarioId: string, input: Scenario, chain: string, verifier: Address, rules: BuiltRequests['rules']): void {
  const same = input.smartContractDeployments.find((d) =>
    (d.status === 'DeploymentStarted' || d.status === 'Deployed') && d.chain === chain && d.address?.toLowerCase() === verifier.toLowerCase() &&
    requestsKey(d.requests ?? []) === requestsKey(rules));
  if (same !== undefined) throw new Conflict(`Scenario ${scenarioId}'s rules are deployed as they are already: deployment "${same.id}" (${same.status})`);
}

/** A deploy's new deployment; its first transaction sends setMultiRequest alone when the verifier held the requests. */
function newDeployment(purpose: Purpose, chain: string, transactions: Transaction[]): SmartContractDeployment {
  const multi = purpose.multiRequest;
  const multiRequest = multi === undefined ? undefined : purpose.call === 'setMultiRequest' ? { ...multi, transactions: transactions.map((t) => t.id) } : multi;
  return {
    id: purpose.deploymentId, contractName: 'UniversalVerifier', status: 'DeploymentStarted', address: purpose.verifier, chain,
    scenarioId: purpose.scenario.id, transactions, requests: purpose.rules, ...(multiRequest && { multiRequest }),
  };
}

/** The scenario with a new deployment; the rules take its requestIds at once only when none is Deployed. */
function withDeployment(input: Scenario, deployment: SmartContractDeployment): Scenario {
  const live = input.smartContractDeployments.some((d) => d.status === 'Deployed');
  // Executes keep reading the Deployed one: its rules keep their requestIds until supersede().
  const rules = live ? input.queryConfigurations : withRequestIds(input.queryConfigurations, deployment.requests ?? []);
  return { ...input, queryConfigurations: rules, smartContractDeployments: [...input.smartContractDeployments, deployment] };
}

const transaction = (deploymentId: string, n: number, txHash: string): Transaction => ({
  id: `tx-${n}`, actionName: 'ScenarioDeploy', status: 'TxPosted', txHash, smartContractDeploymentId: deploymentId,
});

/** The chain's own words, never the RPC URL (it may hold a key). */
function chainError(err: unknown, chain: string): Error {
  if (err instanceof Error && 'statusCode' in err) return err;
  const text = err instanceof Error ? (('shortMessage' in err && typeof err.shortMessage === 'string') ? err.shortMessage : err.name) : 'error';
  return new ChainUnavailable(`Chain ${chain} did not answer the deploy: ${text}`);
}
