/**
 * @0xpolygonid/js-sdk, @iden3/js-iden3-core and @iden3/js-merkletree ship extensionless relative re-exports that
 * NodeNext resolution cannot follow, so they are imported as namespaces and typed here.
 */
import * as sdkNs from '@0xpolygonid/js-sdk';
import * as coreNs from '@iden3/js-iden3-core';
import * as mtNs from '@iden3/js-merkletree';
import type { Merklizer } from '@iden3/js-jsonld-merklization';
import type { Signature } from '@iden3/js-crypto';

/** Every member of `T` must be present at run time, or the import fails here instead of at first use. */
export function librarySubset<T extends object>(namespace: object, members: { readonly [K in keyof T]: true }): T {
  const missing = Object.keys(members).filter((m) => !(m in namespace));
  if (missing.length > 0) throw new Error(`the installed iden3 libraries lack ${missing.join(', ')}`);
  return namespace as T;
}

// ---- @iden3/js-merkletree
export interface Hash {
  readonly bytes: Uint8Array;
  hex(): string;
  bigInt(): bigint;
}
interface HashStatic {
  fromHex(h: string): Hash;
  fromBigInt(i: bigint): Hash;
}
export interface Proof {
  existence: boolean;
  toJSON(): unknown;
}
interface ProofStatic {
  new (obj: { siblings: Hash[]; existence: boolean; nodeAux: { key: Hash; value: Hash } | undefined }): Proof;
  fromJSON(obj: unknown): Proof;
}
interface MerkletreeSubset {
  Hash: HashStatic;
  Proof: ProofStatic;
  verifyProof(root: Hash, proof: Proof, k: bigint, v: bigint): Promise<boolean>;
  testBit(bitmap: Uint8Array, n: number): boolean;
}
const mt = librarySubset<MerkletreeSubset>(mtNs, { Hash: true, Proof: true, verifyProof: true, testBit: true });
export const { Hash, Proof, verifyProof, testBit } = mt;

// ---- @iden3/js-iden3-core
export interface Id {
  bigInt(): bigint;
  string(): string;
}
export interface Did {
  string(): string;
}
interface DidStatic {
  parse(s: string): Did;
  idFromDID(did: Did): Id;
  parseFromId(id: Id): Did;
}
interface IdStatic {
  ethAddressFromId(id: Id): Uint8Array;
  fromBigInt(n: bigint): Id;
}
export interface SchemaHash {
  bigInt(): bigint;
}
export interface Claim {
  hex(): string;
  hIndex(): bigint;
  hiHv(): { hi: bigint; hv: bigint };
  rawSlotsAsInts(): bigint[];
  getSchemaHash(): SchemaHash;
  getRevocationNonce(): bigint;
  getVersion(): number;
  getIdPosition(): number;
  getMerklizedPosition(): number;
  getFlagUpdatable(): boolean;
  getExpirationDate(): Date | null;
  setFlagUpdatable(v: boolean): void;
  setExpirationDate(d: Date): void;
  setIndexId(id: Id): void;
  setValueId(id: Id): void;
  setIndexMerklizedRoot(r: bigint): void;
  setValueMerklizedRoot(r: bigint): void;
}
type ClaimOption = (c: Claim) => void;
interface CoreSubset {
  DID: DidStatic;
  Id: IdStatic;
  SchemaHash: { authSchemaHash: SchemaHash };
  Claim: { newClaim(sh: SchemaHash, ...options: ClaimOption[]): Claim; new (): { fromHex(hex: string): Claim } };
  ClaimOptions: {
    withIndexDataBytes(a: Uint8Array, b: Uint8Array): ClaimOption;
    withValueDataBytes(a: Uint8Array, b: Uint8Array): ClaimOption;
    withRevocationNonce(n: bigint): ClaimOption;
    withVersion(v: number): ClaimOption;
  };
  chainIDfromDID(did: Did): number;
}
const core = librarySubset<CoreSubset>(coreNs, { DID: true, Id: true, SchemaHash: true, Claim: true, ClaimOptions: true, chainIDfromDID: true });
export const { DID, Id, SchemaHash, Claim, ClaimOptions, chainIDfromDID } = core;
export const claimFromHex = (hex: string): Claim => new core.Claim().fromHex(hex);
/** @iden3/js-iden3-core IdPosition and MerklizedRootPosition (numeric enums). */
export const IdPosition = { None: 0, Index: 1, Value: 2 } as const;
export const MerklizedRootPosition = { None: 0, Index: 1, Value: 2 } as const;

// ---- @0xpolygonid/js-sdk
interface TreeState {
  value: Hash;
  claimsTreeRoot: Hash;
  revocationTreeRoot: Hash;
  rootOfRoots: Hash;
}
export interface BjjProof {
  issuerData: {
    id: Did;
    state: TreeState;
    authCoreClaim: Claim;
    mtp: Proof;
    credentialStatus: Record<string, unknown>;
  };
  coreClaim: Claim;
  signature: Signature;
}
interface SdkSubset {
  VerifiableConstants: {
    JSONLD_SCHEMA: Record<
      'W3C_CREDENTIAL_2018' | 'W3C_VC_DOCUMENT_2018' | 'IDEN3_CREDENTIAL' | 'IDEN3_PROOFS_DEFINITION_DOCUMENT' |
      'IDEN3_DISPLAY_METHOD' | 'IDEN3_DISPLAY_METHOD_DEFINITION_DOCUMENT',
      string
    >;
    AUTH: Record<
      'AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL' | 'AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD' | 'AUTH_BJJ_CREDENTIAL_SCHEMA_JSON_URL' |
      'AUTH_BJJ_CREDENTIAL_SCHEMA_JSON',
      string
    >;
  };
  BJJSignatureProof2021: { fromJSON(obj: unknown): BjjProof };
  calculateCoreSchemaHash(schemaId: Uint8Array): SchemaHash;
  fillCoreClaimSlot(slot: Uint8Array, mz: Merklizer, path: string | undefined): Promise<void>;
  findCredentialType(mz: Merklizer): string;
  getSerializationAttrFromContext(context: object, opts: unknown, type: string): Promise<string>;
  parseSerializationAttr(attr: string): { indexAPath?: string; indexBPath?: string; valueAPath?: string; valueBPath?: string };
  isGenesisState(did: Did, state: bigint | string): boolean;
  validateTreeState(state: { state?: string; claimsTreeRoot?: string; revocationTreeRoot?: string; rootOfRoots?: string }): boolean;
}
const sdk = librarySubset<SdkSubset>(sdkNs, {
  VerifiableConstants: true,
  BJJSignatureProof2021: true,
  calculateCoreSchemaHash: true,
  fillCoreClaimSlot: true,
  findCredentialType: true,
  getSerializationAttrFromContext: true,
  parseSerializationAttr: true,
  isGenesisState: true,
  validateTreeState: true,
});
export const {
  VerifiableConstants,
  BJJSignatureProof2021,
  calculateCoreSchemaHash,
  fillCoreClaimSlot,
  findCredentialType,
  getSerializationAttrFromContext,
  parseSerializationAttr,
  isGenesisState,
  validateTreeState,
} = sdk;
