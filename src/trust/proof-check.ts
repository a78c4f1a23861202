import {
  calculateCoreSchemaHash,
  Claim,
  ClaimOptions,
  DID,
  fillCoreClaimSlot,
  findCredentialType,
  getSerializationAttrFromContext,
  IdPosition,
  MerklizedRootPosition,
  parseSerializationAttr,
  type Claim as ClaimT,
} from './iden3.js';
import { DocumentUnavailable, type DocumentLoader } from '../jsonld/documents.js';
import { CYCLE_MESSAGE, merklizeForRoot } from './merklize.js';
import { compiledMerklize } from './merklize-compiled.js';
import { fieldAt, notValid, type Json } from './structure.js';
import { isRecord } from '../schemas/json.js';
import type { TrustVerdict } from '../engine/types.js';

export interface VerifiedProof {
  verdict: TrustVerdict;
  /** False when the verdict hangs on a changeable fact. */
  cacheable: boolean;
  proofType?: string;
  nonce?: bigint;
  keyNonce?: bigint;
  keyExpiresAt?: number;
  /** credentialStatus is covered by the proof (merklized credentials); a BJJ proof's issuerData status never is. */
  statusSigned?: boolean;
}

export interface ColdContext {
  documentLoader: DocumentLoader;
}

export const stateKey = (issuerDid: string, state: string): string => `${issuerDid} ${state}`;

export interface ColdTask {
  credential: Json;
  states?: Record<string, boolean | string>;
  refused?: Record<string, VerifiedProof>;
  documents?: Record<string, string>;
  /** A thread may serve several verifiers. */
  scope?: string;
}

/** A verdict, or the one thing the check needs from the request thread's I/O before it can go on. */
export type ColdResult =
  | { kind: 'done'; proof: VerifiedProof }
  | { kind: 'state'; issuerDid: string; state: string; refused?: Record<string, VerifiedProof> }
  | { kind: 'document'; url: string; refused?: Record<string, VerifiedProof> };

/** `check` runs on the threads with no I/O, never throwing, refusing the cheapest way first. */
export interface ProofType {
  readonly type: string;
  readonly keyRevocation: boolean;
  structure(proof: Json): TrustVerdict;
  check(credential: Json, proof: Json, task: ColdTask, ctx: ColdContext): Promise<ColdResult>;
}

export const done = (proof: VerifiedProof): ColdResult => ({ kind: 'done', proof });
export const refusal = (reason: string, cacheable = true): ColdResult => done({ verdict: notValid(reason), cacheable });

const encoder = new TextEncoder();

function findCause<T extends Error>(e: unknown, type: new (...args: never[]) => T): T | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 8 && cur !== undefined && cur !== null; i++) {
    if (cur instanceof type) return cur;
    cur = fieldAt(cur, 'details', 'cause') ?? fieldAt(cur, 'cause');
  }
  return undefined;
}

/** The jsonld.js error code, never its message or details: they may quote values. */
function jsonLdCode(e: unknown): string | undefined {
  const code = fieldAt(e, 'details', 'event', 'code') ?? fieldAt(e, 'details', 'code');
  return typeof code === 'string' && /^[a-z @-]{1,60}$/i.test(code) ? code : undefined;
}

type Slots = Record<'indexA' | 'indexB' | 'valueA' | 'valueB', Uint8Array>;

/** The compiled merklizer where it answers for a merklized credential, else the library's (filling the slots). */
async function merklized(doc: Json, documentLoader: DocumentLoader, slots: Slots): Promise<{ credentialType: string; nonMerklized: boolean; root: () => Promise<bigint> }> {
  const context = doc['@context'];
  const compiled = await compiledMerklize(doc, documentLoader);
  if (compiled !== undefined && typeof context === 'object' && context !== null) {
    const type = compiled.credentialType;
    const serAttr = await compiled.serializationAttr(() => getSerializationAttrFromContext(context, { documentLoader }, type));
    if (!serAttr) return { credentialType: type, nonMerklized: false, root: () => Promise.resolve(compiled.root) };
  }
  const mz = await merklizeForRoot(JSON.stringify(doc), { documentLoader });
  const credentialType = findCredentialType(mz);
  if (typeof context !== 'object' || context === null) throw new Error('@context is not a JSON object or array');
  const serAttr = await getSerializationAttrFromContext(context, mz.options, credentialType);
  if (serAttr) {
    const paths = parseSerializationAttr(serAttr);
    await fillCoreClaimSlot(slots.indexA, mz, paths.indexAPath);
    await fillCoreClaimSlot(slots.indexB, mz, paths.indexBPath);
    await fillCoreClaimSlot(slots.valueA, mz, paths.valueAPath);
    await fillCoreClaimSlot(slots.valueB, mz, paths.valueBPath);
  }
  return { credentialType, nonMerklized: !!serAttr, root: async () => (await mz.root()).bigInt() };
}

/** js-sdk's W3CCredential.toCoreClaim with a single merklization. */
export async function computeCoreClaim(
  doc: Json,
  opts: { revNonce: bigint; version: number; subjectPosition: number; merklizedRootPosition: number; updatable: boolean },
  documentLoader: DocumentLoader,
): Promise<ClaimT> {
  const slots = { indexA: new Uint8Array(32), indexB: new Uint8Array(32), valueA: new Uint8Array(32), valueB: new Uint8Array(32) };
  const { credentialType, nonMerklized, root } = await merklized(doc, documentLoader, slots);
  let rootPosition = opts.merklizedRootPosition;
  if (nonMerklized && rootPosition !== MerklizedRootPosition.None) {
    throw new Error('merklized root position is not supported for non-merklized claims');
  }
  if (!nonMerklized && rootPosition === MerklizedRootPosition.None) rootPosition = MerklizedRootPosition.Index;

  const claim = Claim.newClaim(
    calculateCoreSchemaHash(encoder.encode(credentialType)),
    ClaimOptions.withIndexDataBytes(slots.indexA, slots.indexB),
    ClaimOptions.withValueDataBytes(slots.valueA, slots.valueB),
    ClaimOptions.withRevocationNonce(opts.revNonce),
    ClaimOptions.withVersion(opts.version),
  );
  if (opts.updatable) claim.setFlagUpdatable(true);
  if (typeof doc.expirationDate === 'string') claim.setExpirationDate(new Date(doc.expirationDate));
  const subject = isRecord(doc.credentialSubject) ? doc.credentialSubject.id : undefined;
  if (subject) {
    const id = DID.idFromDID(DID.parse(String(subject)));
    if (opts.subjectPosition === IdPosition.Value) claim.setValueId(id);
    else claim.setIndexId(id);
  }
  if (rootPosition === MerklizedRootPosition.Index) claim.setIndexMerklizedRoot(await root());
  else if (rootPosition === MerklizedRootPosition.Value) claim.setValueMerklizedRoot(await root());
  return claim;
}

/** Nonces are uint64: a JSON number above 2^53 arrives rounded, so it is compared rounded. */
export function sameNonce(given: unknown, signed: bigint): boolean {
  if (typeof given !== 'number') return false;
  return Number.isSafeInteger(given) ? BigInt(given) === signed : Number(signed) === given;
}

export async function matchContent(credential: Json, claim: ClaimT, proofName: string, ctx: ColdContext): Promise<ColdResult | undefined> {
  const doc: Json = { ...credential };
  delete doc.proof;
  let recomputed: ClaimT;
  try {
    recomputed = await computeCoreClaim(
      doc,
      {
        revNonce: claim.getRevocationNonce(),
        version: claim.getVersion(),
        subjectPosition: claim.getIdPosition(),
        merklizedRootPosition: claim.getMerklizedPosition(),
        updatable: claim.getFlagUpdatable(),
      },
      ctx.documentLoader,
    );
  } catch (e) {
    const missing = findCause(e, DocumentUnavailable);
    if (missing) return { kind: 'document', url: missing.url };
    if (e instanceof Error && e.message === CYCLE_MESSAGE) return refusal(`its content cannot be merklized: ${CYCLE_MESSAGE}`);
    const code = jsonLdCode(e);
    return refusal(
      `its content cannot be verified against its JSON-LD @context${code ? ` (${code})` : ''}: ` +
        'a field or type it uses is undefined there or has a value of the wrong type',
    );
  }
  if (recomputed.hex() !== claim.hex()) {
    return refusal(`its content does not match its ${proofName} proof: credentialSubject, dates, types, status or schema were changed after ${proofName === 'BJJSignature2021' ? 'signing' : 'issuance'}`);
  }
  if (!sameNonce(fieldAt(credential, 'credentialStatus', 'revocationNonce'), claim.getRevocationNonce())) {
    return refusal(`credentialStatus.revocationNonce is not the revocation nonce ${proofName === 'BJJSignature2021' ? 'the issuer signed' : `of the claim its ${proofName} proves`}`);
  }
  return undefined;
}

export const statusCovered = (claim: ClaimT): boolean => claim.getMerklizedPosition() !== MerklizedRootPosition.None;
