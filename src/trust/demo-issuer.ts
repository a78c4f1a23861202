/**
 * Longer than 300 lines: one issuer instance, whose BJJ, MTP, status and reverse-hash answers share its wallet.
 * Its key comes from a public seed: anyone can issue as it, so its DID must never be trusted in production.
 */
import { createHash } from 'node:crypto';
import * as sdkNs from '@0xpolygonid/js-sdk';
import * as coreNs from '@iden3/js-iden3-core';
import { createDocumentLoader, ID_INFORMATION_SCHEMA_URL } from '../jsonld/documents.js';
import { claimFromHex, librarySubset, type Did, type Hash, type Proof } from './iden3.js';
import { DEFAULT_STATUS_RESOLVERS, verifyStatusAnswer, type StatusResolverFn } from './revocation.js';
import { STATUS_TYPES, type Json } from './structure.js';
import { isRecord } from '../schemas/json.js';
import type { StatePublication } from './did-resolver.js';

/** Each answering instance revokes it at creation, so credentials issued in another process need no shared state. */
export const DEMO_REVOKED_NONCE = 4_000_000_001;

const DEMO_ISSUER_SEED = 'scenario-compliance-demo-issuer1';

interface Tree {
  add(k: bigint, v: bigint): Promise<void>;
  root(): Promise<Hash>;
  generateProof(k: bigint, root?: Hash): Promise<{ proof: Proof }>;
}
interface TreeModel {
  state: Hash;
  claimsTree: Tree;
  revocationTree: Tree;
  rootsTree: Tree;
}
interface MtpWithState {
  proof: Proof;
  treeState: { state: Hash; claimsRoot: Hash; revocationRoot: Hash; rootOfRoots: Hash };
}
interface W3C {
  toJSON(): Record<string, unknown>;
}
interface IdentityWallet {
  createIdentity(opts: Record<string, unknown>): Promise<{ did: Did; credential: W3C }>;
  addCredentialsToMerkleTree(credentials: W3C[], did: Did): Promise<unknown>;
  generateIden3SparseMerkleTreeProof(did: Did, credentials: W3C[], txId?: string, blockNumber?: number, blockTimestamp?: number): Promise<W3C[]>;
  issueCredential(did: Did, request: Record<string, unknown>, opts?: Record<string, unknown>): Promise<W3C>;
  getDIDTreeModel(did: Did): Promise<TreeModel>;
  generateNonRevocationMtpWithNonce(did: Did, nonce: bigint): Promise<MtpWithState>;
}
interface SdkSubset {
  KMS: new () => { registerKeyProvider(type: string, provider: unknown): void };
  BjjProvider: new (type: string, store: unknown) => unknown;
  KmsKeyType: { BabyJubJub: string };
  InMemoryPrivateKeyStore: new () => unknown;
  InMemoryDataSource: new () => unknown;
  InMemoryMerkleTreeStorage: new (depth: number) => unknown;
  CredentialStorage: new (ds: unknown) => unknown;
  IdentityStorage: new (identities: unknown, profiles: unknown) => unknown;
  CredentialWallet: new (storage: unknown) => unknown;
  IdentityWallet: new (kms: unknown, storage: unknown, credentialWallet: unknown) => IdentityWallet;
  VerifiableConstants: { ERRORS: { IDENTITY_DOES_NOT_EXIST: string } };
  W3CCredential: { fromJSON(json: unknown): W3C };
  getNodesRepresentation(revokedNonces: number[] | undefined, trees: TreeModel, state: Hash): Promise<{ toJSON(): ReverseHashNode }[]>;
}
const sdk = librarySubset<SdkSubset>(sdkNs, {
  KMS: true,
  BjjProvider: true,
  KmsKeyType: true,
  InMemoryPrivateKeyStore: true,
  InMemoryDataSource: true,
  InMemoryMerkleTreeStorage: true,
  CredentialStorage: true,
  IdentityStorage: true,
  CredentialWallet: true,
  IdentityWallet: true,
  VerifiableConstants: true,
  W3CCredential: true,
  getNodesRepresentation: true,
});
const core = librarySubset<{ DidMethod: { Iden3: string }; Blockchain: { Polygon: string }; NetworkId: { Amoy: string } }>(
  coreNs, { DidMethod: true, Blockchain: true, NetworkId: true },
);

/** js-sdk's toJSON keeps class instances. */
function plainJson(credential: W3C): Json {
  const json: unknown = JSON.parse(JSON.stringify(credential.toJSON()));
  if (!isRecord(json)) throw new Error('js-sdk answered a credential that is not a JSON object');
  return json;
}

export interface RevocationStatusDocument {
  mtp: unknown;
  issuer: { state: string; claimsTreeRoot: string; revocationTreeRoot: string; rootOfRoots: string };
}

interface DemoIssueRequest {
  subjectId: string;
  claims: Record<string, unknown>;
  type?: string;
  credentialSchema?: string;
  issuanceDate?: Date;
  /** Default: a year from now; null: none (the credential never expires). */
  expirationDate?: Date | null;
  nonce?: number;
  id?: string;
  /** Default: SparseMerkleTreeProof at statusUrl (js-sdk appends `/{nonce}`). */
  revocation?: { type: string; id: string };
  proof?: 'bjj' | 'mtp' | 'both';
}

export interface ReverseHashNode {
  hash: string;
  children: string[];
}

interface KeyAtState {
  state: { value: string; claimsTreeRoot: string; revocationTreeRoot: string; rootOfRoots: string };
  mtp: unknown;
}

export interface DemoIssuer {
  readonly did: string;
  readonly statusUrl: string;
  issue(request: DemoIssueRequest): Promise<Record<string, unknown>>;
  revoke(nonce: number | bigint): Promise<void>;
  status(nonce: number | bigint): Promise<RevocationStatusDocument>;
  /** Leaves the genesis state; the new state is published nowhere. */
  advanceState(): Promise<KeyAtState>;
  reverseHashNodes(revokedNonces?: number[]): Promise<ReverseHashNode[]>;
  currentState(): Promise<string>;
  /** Names this issuer, as a forger's would, when the credential is another's. */
  attachMtp(credential: Record<string, unknown>, options?: { publish?: boolean }): Promise<Record<string, unknown>>;
  isPublished(state: string): boolean;
  claimProof(coreClaimHex: string): Promise<KeyAtState>;
}

export function nonceFromStatusPath(path: string): bigint | undefined {
  const digits = /\/(\d{1,20})\/?$/.exec(path)?.[1];
  if (digits === undefined) return undefined;
  const n = BigInt(digits);
  return n < 2n ** 64n ? n : undefined;
}

function uuidFrom(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  // RFC 4122 version 8 (custom) layout: deterministic, not random.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function noStateStorage() {
  const missing = async () => {
    throw new Error(sdk.VerifiableConstants.ERRORS.IDENTITY_DOES_NOT_EXIST);
  };
  return {
    getLatestStateById: missing,
    getStateInfoByIdAndState: missing,
    getGISTProof: missing,
    getGISTRootInfo: missing,
    publishState: missing,
    publishStateGeneric: missing,
    getRpcProvider: () => ({}),
  };
}

interface DemoIssuerNetwork {
  method: string;
  blockchain: string;
  networkId: string;
}

export async function createDemoIssuer(options: { statusUrl: string; seed?: string | Uint8Array; network?: DemoIssuerNetwork }): Promise<DemoIssuer> {
  const statusUrl = options.statusUrl.replace(/\/+$/, '');
  const seed = typeof options.seed === 'string' || options.seed === undefined
    ? new TextEncoder().encode(options.seed ?? DEMO_ISSUER_SEED)
    : options.seed;
  if (seed.length !== 32) throw new RangeError('the demo issuer seed must be 32 bytes');

  const kms = new sdk.KMS();
  kms.registerKeyProvider(sdk.KmsKeyType.BabyJubJub, new sdk.BjjProvider(sdk.KmsKeyType.BabyJubJub, new sdk.InMemoryPrivateKeyStore()));
  const storage = {
    credential: new sdk.CredentialStorage(new sdk.InMemoryDataSource()),
    identity: new sdk.IdentityStorage(new sdk.InMemoryDataSource(), new sdk.InMemoryDataSource()),
    mt: new sdk.InMemoryMerkleTreeStorage(40),
    states: noStateStorage(),
  };
  const wallet = new sdk.IdentityWallet(kms, storage, new sdk.CredentialWallet(storage));
  const { did, credential: authCredential } = await wallet.createIdentity({
    ...(options.network ?? { method: core.DidMethod.Iden3, blockchain: core.Blockchain.Polygon, networkId: core.NetworkId.Amoy }),
    seed,
    revocationOpts: { type: 'SparseMerkleTreeProof', id: statusUrl },
  });
  const loader = createDocumentLoader({ fetch: () => Promise.reject(new Error('offline')), timeoutMs: 1 });
  const published = new Set<string>();
  const atState = async (hIndex: bigint): Promise<KeyAtState> => {
    const now = await wallet.getDIDTreeModel(did);
    const claimsRoot = await now.claimsTree.root();
    const { proof } = await now.claimsTree.generateProof(hIndex, claimsRoot);
    return {
      state: {
        value: now.state.hex(),
        claimsTreeRoot: claimsRoot.hex(),
        revocationTreeRoot: (await now.revocationTree.root()).hex(),
        rootOfRoots: (await now.rootsTree.root()).hex(),
      },
      mtp: proof.toJSON(),
    };
  };
  const attachMtp = async (json: Record<string, unknown>, options: { publish?: boolean } = {}) => {
    const credential = sdk.W3CCredential.fromJSON(json);
    await wallet.addCredentialsToMerkleTree([credential], did);
    const [proved] = await wallet.generateIden3SparseMerkleTreeProof(did, [credential]);
    if (proved === undefined) throw new Error('js-sdk made no Iden3SparseMerkleTreeProof');
    const out = plainJson(proved);
    if (options.publish !== false) published.add((await wallet.getDIDTreeModel(did)).state.hex());
    return out;
  };

  return {
    did: did.string(),
    statusUrl,
    async issue(r) {
      const nonce = r.nonce ?? parseInt(createHash('sha256').update(`${r.subjectId}\u0000${JSON.stringify(r.claims)}`).digest('hex').slice(0, 8), 16);
      const issued = await wallet.issueCredential(
        did,
        {
          id: r.id ?? `urn:uuid:${uuidFrom(`${did.string()}\u0000${r.subjectId}\u0000${nonce}`)}`,
          credentialSchema: r.credentialSchema ?? ID_INFORMATION_SCHEMA_URL,
          type: r.type ?? 'IDInformation',
          credentialSubject: { id: r.subjectId, ...r.claims },
          issuanceDate: Math.floor((r.issuanceDate ?? new Date()).getTime() / 1000),
          expiration: r.expirationDate === null ? undefined : Math.floor((r.expirationDate ?? new Date(Date.now() + 365 * 86_400_000)).getTime() / 1000),
          revocationOpts: { type: r.revocation?.type ?? 'SparseMerkleTreeProof', id: r.revocation?.id ?? statusUrl, nonce },
        },
        { documentLoader: loader },
      );
      const json = plainJson(issued);
      if ((r.proof ?? 'bjj') === 'bjj') return json;
      const proved = await attachMtp(json);
      if (r.proof === 'mtp' && Array.isArray(proved.proof)) proved.proof = proved.proof.filter((p) => !isRecord(p) || p.type !== 'BJJSignature2021');
      return proved;
    },
    attachMtp,
    isPublished: (state) => published.has(state),
    claimProof: async (hex) => atState(claimFromHex(hex).hIndex()),
    async revoke(nonce) {
      const trees = await wallet.getDIDTreeModel(did);
      await trees.revocationTree.add(BigInt(nonce), 0n);
    },
    async advanceState() {
      const trees = await wallet.getDIDTreeModel(did);
      const marker = BigInt('0x' + createHash('sha256').update(`${Date.now()}\u0000${Math.random()}`).digest('hex').slice(0, 60));
      await trees.claimsTree.add(marker, 1n);
      const proofs: unknown = authCredential.toJSON().proof;
      const coreClaim = (Array.isArray(proofs) ? proofs : []).map((p) => (isRecord(p) ? p.coreClaim : undefined)).find((c) => typeof c === 'string');
      if (coreClaim === undefined) throw new Error('the demo issuer\'s auth credential has no core claim');
      return atState(claimFromHex(coreClaim).hIndex());
    },
    async reverseHashNodes(revokedNonces) {
      const trees = await wallet.getDIDTreeModel(did);
      const nodes = await sdk.getNodesRepresentation(revokedNonces, trees, trees.state);
      return nodes.map((n) => n.toJSON());
    },
    async currentState() {
      return (await wallet.getDIDTreeModel(did)).state.hex();
    },
    async status(nonce) {
      const { proof, treeState } = await wallet.generateNonRevocationMtpWithNonce(did, BigInt(nonce));
      return {
        mtp: proof.toJSON(),
        issuer: {
          state: treeState.state.hex(),
          claimsTreeRoot: treeState.claimsRoot.hex(),
          revocationTreeRoot: treeState.revocationRoot.hex(),
          rootOfRoots: treeState.rootOfRoots.hex(),
        },
      };
    },
  };
}

/** After issuing: revoking moves the state, which later credentials carry. */
export async function revokeDemoNonce(issuer: DemoIssuer): Promise<DemoIssuer> {
  await issuer.revoke(DEMO_REVOKED_NONCE);
  return issuer;
}

/** A fresh instance with the same seed answers as the one that issued; the answer is verified like any other. */
export function demoStatusResolver(
  issuer: DemoIssuer,
  otherwise: StatusResolverFn = DEFAULT_STATUS_RESOLVERS[STATUS_TYPES.SparseMerkleTreeProof],
): StatusResolverFn {
  return async (request, io) =>
    request.issuerDid === issuer.did ? verifyStatusAnswer(await issuer.status(request.nonce), request.nonce) : otherwise(request, io);
}

/** Every demo state counts as published: another process may have issued at states this instance never saw. */
export function demoStatePublication(issuer: DemoIssuer, otherwise: StatePublication): StatePublication {
  return { isPublished: (did, state) => (did === issuer.did ? Promise.resolve(true) : otherwise.isPublished(did, state)) };
}
