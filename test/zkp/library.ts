/**
 * The verifier library as the failure-table tests drive it: js-iden3-auth's own Verifier (with the same Groth16
 * offload as the service), the js-sdk and js-jwz copies it loads, state resolvers the tests steer, requests and
 * answers made from the public test vector, forged JWZ tokens, and a switch that makes the JWZ auth proof pass (no
 * authV2 proving key is available offline, and the packer checks states and sender only after a valid proof).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { auth } from '@iden3/js-iden3-auth';
import { offloadGroth16 } from '../../src/zkp/groth16.js';
import {
  buildAuthorizationRequest, defaultCircuitsDir, ZkpError, type AuthorizationRequest, type ResolvedState,
  type StateResolver, type StateResolvers, type ZkpQueryConfiguration,
} from '../../src/zkp/index.js';
import { fixtureConfiguration, fixtureRequest, iden3DocumentLoader, plainResponse, VERIFIER_DID, requestSettings } from './fixtures.js';

const authEntry = createRequire(import.meta.url).resolve('@iden3/js-iden3-auth');
/** require() as js-iden3-auth does: its own copies of js-sdk, js-jwz and ethers. */
export const iden3Require = createRequire(authEntry);
/** The directory of `pkg` as js-iden3-auth resolves it (their exports maps hide package.json). */
export function packageDir(pkg: string): string {
  const entry = pkg === '@iden3/js-iden3-auth' ? authEntry : iden3Require.resolve(pkg);
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === pkg) return dir;
  }
  throw new Error(`${pkg} is not installed where js-iden3-auth looks`);
}

/** The public test vector is from March 2023: a window of 100 years. */
export const WIDE = 100 * 365 * 86_400_000;
/** The user id of the vector's holder (the userID signal). */
export const USER_ID = '27152676987128542066808591998573000370436464722519513348891049644813718018';

export type StateMode = 'latest' | 'replaced' | 'none' | 'down' | 'garbage';

/** Resolvers for every chain, steered: latest, replaced long ago, none configured, RPC down, or a nonsense answer. */
export function steeredResolvers(): { resolvers: StateResolvers; set(mode: StateMode): void } {
  let mode: StateMode = 'latest';
  const answer = async (state: bigint): Promise<ResolvedState> => {
    if (mode === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:8545');
    if (mode === 'garbage') return undefined as unknown as ResolvedState;
    if (mode === 'replaced') return { latest: false, genesis: false, state, transitionTimestamp: 1_600_000_000 };
    return { latest: true, genesis: false, state: null, transitionTimestamp: 0 };
  };
  const resolver: StateResolver = { resolve: (_id, state) => answer(state), rootResolve: (root) => answer(root) };
  const resolvers = new Proxy({} as StateResolvers, { get: (_t, key) => (typeof key === 'string' && mode !== 'none' ? resolver : undefined) });
  return { resolvers, set: (m) => { mode = m; } };
}

/** js-iden3-auth's Verifier, typed as far as the tests call it. */
export interface Library {
  verifyAuthResponse(response: unknown, request: unknown, opts?: object): Promise<void>;
  verifyAuthRequest(request: unknown): void;
  fullVerify(token: string, request: unknown, opts?: object): Promise<unknown>;
  prover: { verify(proof: unknown, circuitId: string): Promise<boolean> };
  circuitStorage: { loadCircuitData(circuitId: string, opts?: object): Promise<unknown> };
}

export async function createLibrary(resolvers: StateResolvers): Promise<Library> {
  const lib = await auth.Verifier.newVerifier({
    stateResolver: resolvers, circuitsDir: defaultCircuitsDir(), documentLoader: iden3DocumentLoader() as never,
  });
  await offloadGroth16(lib);
  return lib as unknown as Library;
}

/** As verify.ts calls the library: wide proof age, expiry judged elsewhere. */
export const LIB_OPTS = { acceptedProofGenerationDelay: WIDE, allowExpiredMessages: true };

/** The pending authorization an execute makes for `config` (the vector's query, by default), to its thread. */
export const buildPending = (config: ZkpQueryConfiguration = fixtureConfiguration(), over: Record<string, unknown> = {}) =>
  buildAuthorizationRequest([config], {
    ...requestSettings,
    callbackUrl: 'https://svc.example/compliance/executions/e1/zkp',
    verifierDid: VERIFIER_DID,
    reason: fixtureRequest.reason,
    message: fixtureRequest.message,
    thid: fixtureRequest.thid,
    ...over,
  }).pending;

/** Its authorization request, as verify.ts hands it to the library (expiry is judged before). */
export function libRequest(config?: ZkpQueryConfiguration, over: Record<string, unknown> = {}): AuthorizationRequest {
  const request = structuredClone(buildPending(config, over).request);
  delete request.expires_time;
  return request;
}

/** The ZkpError `p` rejects with (it must). */
export async function rejection(p: Promise<unknown>): Promise<ZkpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ZkpError) return e;
    throw e;
  }
  throw new Error('expected a ZkpError');
}

export type Message = Record<string, unknown> & { body: Record<string, unknown> & { scope: Array<Record<string, unknown>> } };
/** The vector's answer as a message (plainResponse's options). */
export const libResponse = (options: Parameters<typeof plainResponse>[0] = {}): Message => JSON.parse(plainResponse(options)) as Message;

/** What `run` rejects with (it must reject). */
export async function failureOf(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (e) {
    return e;
  }
  throw new Error('expected the library to fail');
}

const part = (x: unknown) => Buffer.from(JSON.stringify(x)).toString('base64url');
export const JWZ_HEADER = { alg: 'groth16', circuitId: 'authV2', crit: ['circuitId'], typ: 'application/iden3-zkp-json' };

interface JwzModule {
  Token: { parse(token: string): Promise<{ getMessageHash(): Promise<Uint8Array> }> };
  ProvingMethodAlg: new (alg: string, circuitId: string) => object;
  proving: {
    getProvingMethod(alg: object): Promise<object>;
    registerProvingMethod(alg: object, f: () => object): Promise<void>;
  };
}
const jwz = iden3Require('@iden3/js-jwz') as JwzModule;

/**
 * A JWZ token of the vector's answer (from the holder, to the verifier), its auth proof part made up: the vector's
 * query proof points, with `signals`, by default [holder's user id, the message's hash (the challenge), a GIST root].
 */
export async function forgeJwz(options: { header?: Record<string, unknown>; from?: string; signals?: string[] } = {}): Promise<string> {
  const header = options.header ?? JWZ_HEADER;
  const message = { ...libResponse({ from: options.from }), typ: 'application/iden3-zkp-json' };
  const proof = libResponse().body.scope[0]?.proof;
  const token = (signals: string[]) => `${part(header)}.${part(message)}.${part({ proof, pub_signals: signals })}`;
  if (options.signals) return token(options.signals);
  const hash = await (await jwz.Token.parse(token([USER_ID, '1', '1']))).getMessageHash();
  return token([USER_ID, BigInt(`0x${Buffer.from(hash).toString('hex')}`).toString(), '1']);
}

/** Makes the authV2 proof of any JWZ verify (its signals must still unmarshal); returns the undo. */
export async function acceptAnyAuthProof(): Promise<() => Promise<void>> {
  const alg = new jwz.ProvingMethodAlg('groth16', 'authV2');
  const current = await jwz.proving.getProvingMethod(alg);
  const lenient = Object.assign(Object.create(current) as object, { verify: async () => true });
  await jwz.proving.registerProvingMethod(alg, () => lenient);
  return () => jwz.proving.registerProvingMethod(alg, () => current);
}
