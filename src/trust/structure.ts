/** They keep malformed input away from the libraries. Reasons name fields, never credentialSubject values. */
import type { Address } from 'viem';
import type { TrustVerdict } from '../engine/types.js';
import { isRecord } from '../schemas/json.js';

const W3C_CREDENTIALS_V1 = 'https://www.w3.org/2018/credentials/v1';

export const STATUS_TYPES = {
  SparseMerkleTreeProof: 'SparseMerkleTreeProof',
  Iden3ReverseSparseMerkleTreeProof: 'Iden3ReverseSparseMerkleTreeProof',
  Iden3commRevocationStatusV1: 'Iden3commRevocationStatusV1.0',
  Iden3OnchainSparseMerkleTreeProof2023: 'Iden3OnchainSparseMerkleTreeProof2023',
} as const;

const SCHEMA_TYPES: ReadonlySet<string> = new Set(['JsonSchema2023', 'JsonSchemaValidator2018']);
const MAX_URI = 2048;
const ABSOLUTE_URI = /^[a-z][a-z0-9+.-]*:\S+$/i;

export type Json = Record<string, unknown>;

export function fieldAt(x: unknown, ...path: string[]): unknown {
  let cur = x;
  for (const key of path) cur = isRecord(cur) ? cur[key] : undefined;
  return cur;
}

export function notValid(reason: string): TrustVerdict {
  return { ok: false, status: 'not-valid', reason };
}

export function undecided(reason: string): TrustVerdict {
  return { ok: false, status: 'error', reason };
}

export const OK: TrustVerdict = Object.freeze<TrustVerdict>({ ok: true });

export const isEvmAddress = (s: unknown): s is Address => typeof s === 'string' && /^0x[0-9a-fA-F]{40}$/.test(s);

export function isHttpUrl(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > MAX_URI) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/** uint64: JSON numbers above 2^53 arrive rounded, and 2^64 - 1 arrives as 2^64. */
function isNonce(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= 2 ** 64;
}

export function checkStatus(status: unknown, where: string): TrustVerdict {
  if (!isRecord(status)) return notValid(`${where} is missing or not an object`);
  const { id, type, revocationNonce } = status;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_URI) return notValid(`${where}.id must be a non-empty string of at most ${MAX_URI} characters`);
  if (typeof type !== 'string' || type.length === 0) return notValid(`${where}.type must be a non-empty string`);
  if (!isNonce(revocationNonce)) return notValid(`${where}.revocationNonce must be a non-negative integer`);
  // An unknown type is well-formed as far as structure goes: the revocation step answers `error` for it, after the
  // proof was checked (so that a forged credential is not-valid rather than undecided).
  switch (type) {
    case STATUS_TYPES.SparseMerkleTreeProof:
    case STATUS_TYPES.Iden3commRevocationStatusV1:
    case STATUS_TYPES.Iden3ReverseSparseMerkleTreeProof:
      if (!isHttpUrl(id)) return notValid(`${where}.id must be an http(s) URL for ${type}`);
      break;
    case STATUS_TYPES.Iden3OnchainSparseMerkleTreeProof2023:
      if (!/^did:[a-z0-9]+:\S+$/.test(id)) return notValid(`${where}.id must be a DID URL for ${type}`);
      break;
  }
  return OK;
}

function checkSchema(schema: unknown): TrustVerdict {
  if (!isRecord(schema)) return notValid('credentialSchema is missing or not an object');
  const { id, type } = schema;
  if (typeof id !== 'string' || id.length > MAX_URI || !ABSOLUTE_URI.test(id)) return notValid('credentialSchema.id must be an absolute URI');
  if (typeof type !== 'string' || !SCHEMA_TYPES.has(type)) {
    return notValid('credentialSchema.type must be JsonSchema2023 or JsonSchemaValidator2018');
  }
  return OK;
}

export function checkStructure(c: unknown, checkProofs: (proof: unknown) => TrustVerdict): TrustVerdict {
  if (!isRecord(c)) return notValid('is not a JSON object');
  if (typeof c.id !== 'string' || c.id.length === 0) return notValid('id must be a non-empty string');
  const context = c['@context'];
  if (!Array.isArray(context) || context[0] !== W3C_CREDENTIALS_V1) return notValid(`@context must be an array starting with ${W3C_CREDENTIALS_V1}`);
  if (!Array.isArray(c.type) || !c.type.includes('VerifiableCredential')) return notValid('type must be an array that includes VerifiableCredential');
  if (typeof c.issuer !== 'string' || c.issuer.length > 512 || !/^did:[a-z0-9]+:\S+$/.test(c.issuer)) return notValid('issuer must be a DID of at most 512 characters');
  if (!isRecord(c.credentialSubject)) return notValid('credentialSubject must be an object');
  const schema = checkSchema(c.credentialSchema);
  if (!schema.ok) return schema;
  const proofs = checkProofs(c.proof);
  if (!proofs.ok) return proofs;
  return checkStatus(c.credentialStatus, 'credentialStatus');
}
