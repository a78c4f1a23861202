/**
 * Over 300 lines (302): the numbered steps below are one procedure, kept in the order js-sdk runs them.
 *
 * BJJSignature2021 proof verification, step by step as @0xpolygonid/js-sdk's W3CCredential.verifyProof does it, with
 * the I/O replaced by ours (offline document loader, DID resolver with timeout and cache) and with the checks js-sdk
 * leaves out added:
 *
 * 1. The proof's issuer (issuerData.id) is the credential's `issuer` (js-sdk does not compare them).
 * 2. Core claim match: the core claim is recomputed from the credential (JSON-LD merklization of everything but the
 *    proof, with its @context, in JSON-LD safe mode, so that undefined terms and types are refused, not dropped) and
 *    must equal the signed core claim in the proof: any change to credentialSubject, the dates, the types,
 *    credentialStatus or credentialSchema, or any field added, fails. Same computation as js-sdk's toCoreClaim, with
 *    one merklization instead of two.
 * 3. Signature: the issuer key is the public key in the proof's auth claim (issuerData.authCoreClaim, which must be
 *    an AuthBJJCredential claim); the BabyJubJub signature of poseidon(hi, hv) of the core claim must verify with it.
 * 4. The key belongs to the issuer: the auth claim must be in the issuer's claims tree (issuerData.mtp against
 *    issuerData.state.claimsTreeRoot; js-sdk skips this), the stated issuer state must be the hash of its three roots
 *    (js-sdk skips this too), and that state must be the issuer's genesis state (the DID itself commits to it: checked
 *    offline) or a state the DID resolver says was published.
 * 5. The auth claim's revocation nonce equals the one in issuerData.credentialStatus (the key's own revocation is
 *    checked by the revocation step, with a short cache, not here).
 *
 * Order of work (coldCheck below): 1, then 3 and the local part of 4 (the signature, the key in the issuer's claims
 * tree, the state as the hash of its roots), then whether that state is the issuer's genesis state, or else a state the
 * DID resolver says was published (asked of the request thread: coldCheck does no I/O), and only then 2 (JSON-LD
 * merklization, about as costly as all the rest together, and the only step that may need a document from the
 * network). A forged signature or a key self-signed under a trusted issuer's name thus costs no JSON-LD processing, and
 * no document is fetched for a credential whose signing key is not shown to be its issuer's.
 *
 * The checks run in a worker thread (pool.ts) with the fast Poseidon of poseidon.ts, the fast BabyJubJub
 * verification of babyjub.ts and the one-pass tree root of merklize.ts; their results are equal to the iden3
 * libraries' (see their tests).
 *
 * The result of steps 1-5 does not depend on time or on the request, so the verifier caches it per credential content.
 */
import { poseidon } from '@iden3/js-crypto';
import {
  BJJSignatureProof2021,
  calculateCoreSchemaHash,
  Claim,
  ClaimOptions,
  DID,
  fillCoreClaimSlot,
  findCredentialType,
  getSerializationAttrFromContext,
  IdPosition,
  isGenesisState,
  MerklizedRootPosition,
  parseSerializationAttr,
  SchemaHash,
  validateTreeState,
  verifyProof,
  type BjjProof,
  type Claim as ClaimT,
} from './iden3.js';
import { verifyPoseidonSignature } from './babyjub.js';
import { DocumentUnavailable, type DocumentLoader } from './documents.js';
import { merklizeForRoot } from './merklize.js';
import { findBjjProof, isRecord, notValid, OK, type Json } from './structure.js';
import type { TrustVerdict } from '../engine/types.js';

/** What the later steps need from a verified proof. */
export interface VerifiedProof {
  verdict: TrustVerdict;
  /** Whether the verdict may be cached with the credential's content (false when it hangs on a changeable fact). */
  cacheable: boolean;
  /** The signed revocation nonce of the credential (from the core claim). */
  nonce?: bigint;
  /**
   * The issuer key's revocation nonce (from the auth claim). Its status is asked of the credential's own, signed
   * credentialStatus (revocation.ts keyStatusFrom), never of the proof's issuerData.credentialStatus, which no
   * signature covers.
   */
  keyNonce?: bigint;
  /** The issuer key's expiration (epoch ms), when its auth claim has one. */
  keyExpiresAt?: number;
  /**
   * Whether credentialStatus is covered by the signature (merklized credentials: the whole credential is in the
   * signed merklized root). The issuer key's status in the proof never is.
   */
  statusSigned?: boolean;
}

const encoder = new TextEncoder();

function findCause<T extends Error>(e: unknown, type: new (...args: never[]) => T): T | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 8 && cur !== undefined && cur !== null; i++) {
    if (cur instanceof type) return cur;
    const c = cur as { cause?: unknown; details?: { cause?: unknown } };
    cur = c.details?.cause ?? c.cause;
  }
  return undefined;
}

/** The JSON-LD error code (jsonld.js), never its message or details (they may quote values). */
function jsonLdCode(e: unknown): string | undefined {
  const err = e as { name?: string; details?: { code?: string; event?: { code?: string } } };
  const code = err?.details?.event?.code ?? err?.details?.code;
  return typeof code === 'string' && /^[a-z @-]{1,60}$/i.test(code) ? code : undefined;
}

/**
 * The core claim of a credential, as js-sdk's W3CCredential.toCoreClaim computes it for the given options, with a
 * single merklization. `doc` is the credential without its proof.
 */
export async function computeCoreClaim(
  doc: Json,
  opts: { revNonce: bigint; version: number; subjectPosition: number; merklizedRootPosition: number; updatable: boolean },
  documentLoader: DocumentLoader,
): Promise<ClaimT> {
  const mz = await merklizeForRoot(JSON.stringify(doc), { documentLoader });
  const credentialType = findCredentialType(mz);
  const serAttr = await getSerializationAttrFromContext(doc['@context'] as object, mz.options, credentialType);
  const slots = { indexA: new Uint8Array(32), indexB: new Uint8Array(32), valueA: new Uint8Array(32), valueB: new Uint8Array(32) };
  let nonMerklized = false;
  if (serAttr) {
    nonMerklized = true;
    const paths = parseSerializationAttr(serAttr);
    await fillCoreClaimSlot(slots.indexA, mz, paths.indexAPath);
    await fillCoreClaimSlot(slots.indexB, mz, paths.indexBPath);
    await fillCoreClaimSlot(slots.valueA, mz, paths.valueAPath);
    await fillCoreClaimSlot(slots.valueB, mz, paths.valueBPath);
  }
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
  if (rootPosition === MerklizedRootPosition.Index) claim.setIndexMerklizedRoot((await mz.root()).bigInt());
  else if (rootPosition === MerklizedRootPosition.Value) claim.setValueMerklizedRoot((await mz.root()).bigInt());
  return claim;
}

/**
 * A JSON revocation nonce against the signed one. Nonces are uint64; a JSON number above 2^53 arrives rounded, so it
 * is compared rounded (the signed value is the one used for revocation lookups).
 */
function sameNonce(given: unknown, signed: bigint): boolean {
  if (typeof given !== 'number') return false;
  return Number.isSafeInteger(given) ? BigInt(given) === signed : Number(signed) === given;
}

/** What a cold check needs besides the credential: the offline JSON-LD documents (run anywhere, no I/O). */
export interface ColdContext {
  documentLoader: DocumentLoader;
}

/**
 * One cold check, as it crosses to a worker thread: the credential (without anything the service added), whether the
 * issuer state its proof names was already found published by the DID resolver (so the check goes on past it), and the
 * remote JSON-LD documents fetched for it so far (URL -> JSON text).
 */
export interface ColdTask {
  credential: Json;
  statePublished?: boolean;
  documents?: Record<string, string>;
  /** Whose remote documents these are, in a thread that serves several verifiers (set by the pool). */
  scope?: string;
}

/**
 * The answer of a cold check: a verdict, or the one thing it needs from the request thread's I/O before it can go on:
 * whether an issuer state is published (the DID resolver), or a JSON-LD document that is not available offline.
 */
export type ColdResult =
  | { kind: 'done'; proof: VerifiedProof }
  | { kind: 'state'; issuerDid: string; state: string }
  | { kind: 'document'; url: string };

/**
 * Steps 1-5 above for one credential that passed the structure checks, without I/O: what needs I/O is asked for in the
 * result. Never throws. The order is the cheapest refusal first, and nothing is merklized (so no JSON-LD document is
 * asked for) before the signing key is shown to be the issuer's: in its claims tree at a state that is the issuer's
 * genesis state or was found published.
 */
export async function coldCheck(task: ColdTask, ctx: ColdContext): Promise<ColdResult> {
  const done = (proof: VerifiedProof): ColdResult => ({ kind: 'done', proof });
  const credential = task.credential;
  const raw = findBjjProof(credential.proof) as Json;
  let proof: BjjProof;
  try {
    proof = BJJSignatureProof2021.fromJSON(raw);
  } catch {
    return done({ verdict: notValid('its BJJSignature2021 proof is malformed (issuerData, coreClaim or signature cannot be read)'), cacheable: true });
  }
  const issuerDid = proof.issuerData.id.string();
  if (issuerDid !== credential.issuer) {
    return done({ verdict: notValid('its BJJSignature2021 proof was made by another issuer than the credential names'), cacheable: true });
  }

  const signed = proof.coreClaim;

  // 3. Signature with the key of the auth claim.
  const auth = proof.issuerData.authCoreClaim;
  if (auth.getSchemaHash().bigInt() !== SchemaHash.authSchemaHash.bigInt()) {
    return done({ verdict: notValid('the key claim in its proof (issuerData.authCoreClaim) is not an AuthBJJCredential claim'), cacheable: true });
  }
  let signatureValid = false;
  try {
    // The key is the claim's index slots 2 and 3 (X and Y of the BabyJubJub point).
    const slots = auth.rawSlotsAsInts();
    const x = slots[2];
    const y = slots[3];
    const { hi, hv } = signed.hiHv();
    signatureValid = x !== undefined && y !== undefined && verifyPoseidonSignature([x, y], poseidon.hash([hi, hv]), proof.signature);
  } catch {
    signatureValid = false;
  }
  if (!signatureValid) return done({ verdict: notValid('its signature does not verify against the issuer key named in its proof'), cacheable: true });

  // 4. The key belongs to the issuer at a genesis or published state.
  const st = proof.issuerData.state;
  const treeOk = validateTreeState({
    state: st.value.hex(),
    claimsTreeRoot: st.claimsTreeRoot.hex(),
    revocationTreeRoot: st.revocationTreeRoot.hex(),
    rootOfRoots: st.rootOfRoots.hex(),
  });
  if (!treeOk) return done({ verdict: notValid('the issuer state in its proof is not the hash of its tree roots'), cacheable: true });
  let included = false;
  try {
    const { hi, hv } = auth.hiHv();
    included = proof.issuerData.mtp.existence && (await verifyProof(st.claimsTreeRoot, proof.issuerData.mtp, hi, hv));
  } catch {
    included = false;
  }
  if (!included) return done({ verdict: notValid("the signing key is not in the issuer's claims tree at the state its proof names"), cacheable: true });
  let genesis = false;
  try {
    genesis = isGenesisState(proof.issuerData.id, st.value.bigInt());
  } catch {
    genesis = false;
  }
  if (!genesis && task.statePublished !== true) return { kind: 'state', issuerDid, state: st.value.hex() };

  // 2. Core claim match: the expensive step (JSON-LD processing), after every cheap check.
  const doc: Json = { ...credential };
  delete doc.proof;
  let recomputed: ClaimT;
  try {
    recomputed = await computeCoreClaim(
      doc,
      {
        revNonce: signed.getRevocationNonce(),
        version: signed.getVersion(),
        subjectPosition: signed.getIdPosition(),
        merklizedRootPosition: signed.getMerklizedPosition(),
        updatable: signed.getFlagUpdatable(),
      },
      ctx.documentLoader,
    );
  } catch (e) {
    const missing = findCause(e, DocumentUnavailable);
    if (missing) return { kind: 'document', url: missing.url };
    const code = jsonLdCode(e);
    return done({
      verdict: notValid(
        `its content cannot be verified against its JSON-LD @context${code ? ` (${code})` : ''}: ` +
          'a field or type it uses is undefined there or has a value of the wrong type',
      ),
      cacheable: true,
    });
  }
  if (recomputed.hex() !== signed.hex()) {
    return done({
      verdict: notValid('its content does not match its BJJSignature2021 proof: credentialSubject, dates, types, status or schema were changed after signing'),
      cacheable: true,
    });
  }
  const status = credential.credentialStatus as Json;
  if (!sameNonce(status.revocationNonce, signed.getRevocationNonce())) {
    return done({ verdict: notValid('credentialStatus.revocationNonce is not the revocation nonce the issuer signed'), cacheable: true });
  }

  // 5. The key's revocation nonce, whose status is checked later (of the credential's own signed status source; the
  // unsigned issuerData.credentialStatus must still state the nonce, as js-sdk requires).
  const keyNonce = auth.getRevocationNonce();
  if (!sameNonce((proof.issuerData.credentialStatus as unknown as Json).revocationNonce, keyNonce)) {
    return done({ verdict: notValid("the issuer key's credentialStatus in its proof does not carry the key's revocation nonce"), cacheable: true });
  }
  const exp = auth.getExpirationDate();
  return done({
    verdict: OK,
    cacheable: true,
    nonce: signed.getRevocationNonce(),
    keyNonce,
    keyExpiresAt: exp ? exp.getTime() : undefined,
    statusSigned: signed.getMerklizedPosition() !== MerklizedRootPosition.None,
  });
}
