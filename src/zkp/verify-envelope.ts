import { isCanonicalIden3Did } from './did.js';
import { isRecord } from '../schemas/json.js';
import { MalformedResponseError, UnsupportedResponseError } from './errors.js';
import { AUTHORIZATION_RESPONSE_TYPE, PLAIN_MEDIA_TYPE } from './request.js';

/** Longest token accepted (a JWZ with a few proofs is ~10-20 KiB). */
export const MAX_TOKEN_LENGTH = 1024 * 1024;

export interface ProofResponse {
  id: number;
  circuitId: string;
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol?: string; curve?: string };
  pub_signals: string[];
  vp?: unknown;
}

export interface ResponseMessage {
  id: string;
  typ?: string;
  type: string;
  thid: string;
  from: string;
  to?: string;
  body: { message?: string | null; scope: ProofResponse[]; [k: string]: unknown };
  [k: string]: unknown;
}

export interface DecodedResponse {
  envelope: 'jwz' | 'plain';
  message: ResponseMessage;
  /** The JWZ token's auth circuit (authV2, authV3, authV3-8-32). */
  circuitId?: string;
}

const DECIMAL = /^[0-9]{1,80}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const AUTH_CIRCUITS = new Set(['authV2', 'authV3', 'authV3-8-32']);
const MAX_SIGNALS = 512;

function decodeJsonPart(part: string, what: string): unknown {
  if (!BASE64URL.test(part)) throw new MalformedResponseError(`the token's ${what} is not base64url`);
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new MalformedResponseError(`the token's ${what} is not base64url-encoded JSON`);
  }
}

export function decodeResponse(token: unknown, allowPlain: boolean): DecodedResponse {
  if (typeof token !== 'string' || token.trim().length === 0) {
    throw new MalformedResponseError('the body must be the JWZ token of an iden3comm authorization response');
  }
  if (token.length > MAX_TOKEN_LENGTH) throw new MalformedResponseError(`the token is longer than ${MAX_TOKEN_LENGTH} characters`);
  const text = token.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new MalformedResponseError('the body is neither a JWZ token nor a JSON iden3comm message');
    }
    if (!allowPlain) {
      throw new UnsupportedResponseError('unsigned (plain JSON) responses are not accepted: send the JWZ token the wallet produced');
    }
    const message = checkMessage(parsed);
    if (message.typ !== undefined && message.typ !== PLAIN_MEDIA_TYPE) {
      throw new MalformedResponseError(`a JSON message must have typ ${PLAIN_MEDIA_TYPE}`);
    }
    return { envelope: 'plain', message };
  }
  const parts = text.split('.');
  if (parts.length === 5) throw new UnsupportedResponseError('encrypted (JWE) responses are not supported: send the JWZ token');
  const [headerPart, payloadPart, proofPart] = parts;
  if (parts.length !== 3 || headerPart === undefined || payloadPart === undefined || proofPart === undefined) {
    throw new MalformedResponseError('the token is not a JWZ (three base64url parts separated by dots)');
  }
  const header = decodeJsonPart(headerPart, 'header');
  if (!isRecord(header)) throw new MalformedResponseError('the token header is not a JSON object');
  if (header.alg !== 'groth16') {
    throw new UnsupportedResponseError(`tokens signed with ${JSON.stringify(String(header.alg).slice(0, 32))} are not supported: ` +
      'only JWZ tokens (alg groth16) are accepted');
  }
  if (typeof header.circuitId !== 'string' || !AUTH_CIRCUITS.has(header.circuitId)) {
    throw new UnsupportedResponseError(`JWZ tokens proved with circuit ${JSON.stringify(String(header.circuitId).slice(0, 64))} are not ` +
      `supported (expected ${[...AUTH_CIRCUITS].join(', ')})`);
  }
  // js-jwz reads crit without checking it (a token without it fails with a TypeError no failure table can name).
  if (!Array.isArray(header.crit) || !header.crit.every((k) => typeof k === 'string')) {
    throw new MalformedResponseError('the token header must list its critical headers (crit) as JWZ does');
  }
  const message = checkMessage(decodeJsonPart(payloadPart, 'payload'));
  const zkp = decodeJsonPart(proofPart, 'proof');
  if (!isRecord(zkp) || !isRecord(zkp.proof) || !Array.isArray(zkp.pub_signals)) {
    throw new MalformedResponseError('the token proof part must be {proof, pub_signals}');
  }
  return { envelope: 'jwz', message, circuitId: header.circuitId };
}

const isDecimal = (e: unknown): e is string => typeof e === 'string' && DECIMAL.test(e);
const isPoint = (v: unknown, n: number): v is string[] => Array.isArray(v) && v.length === n && v.every(isDecimal);
const isPointRows = (v: unknown): v is string[][] => Array.isArray(v) && v.length === 3 && v.every((row) => isPoint(row, 2));

function checkMessage(x: unknown): ResponseMessage {
  if (!isRecord(x)) throw new MalformedResponseError('the message is not a JSON object');
  if (x.type !== AUTHORIZATION_RESPONSE_TYPE) {
    throw new MalformedResponseError(`the message type must be ${AUTHORIZATION_RESPONSE_TYPE}`);
  }
  const { id, thid, from, to, body } = x;
  if (typeof id !== 'string' || id.length === 0) throw new MalformedResponseError('the message has no id');
  if (typeof thid !== 'string' || thid.length === 0) throw new MalformedResponseError('the message has no thid (thread id)');
  if (typeof from !== 'string') throw new MalformedResponseError('the message has no from (the holder DID)');
  if (!isCanonicalIden3Did(from)) throw new MalformedResponseError('the message from is not an iden3 DID');
  if (to !== undefined && typeof to !== 'string') throw new MalformedResponseError('the message to must be a DID');
  if (!isRecord(body)) throw new MalformedResponseError('the message has no body');
  if (body.message !== undefined && body.message !== null && typeof body.message !== 'string') {
    throw new MalformedResponseError('body.message must be a string');
  }
  if (!Array.isArray(body.scope)) throw new MalformedResponseError('body.scope must be an array of proofs');
  if (body.scope.length > 256) throw new MalformedResponseError('body.scope holds too many proofs');
  const seen = new Set<number>();
  const scope = body.scope.map((p: unknown, i): ProofResponse => {
    const at = `body.scope[${i}]`;
    if (!isRecord(p)) throw new MalformedResponseError(`${at} is not an object`);
    const { id, circuitId, proof } = p;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw new MalformedResponseError(`${at}.id must be the request id (an integer)`);
    if (seen.has(id)) throw new MalformedResponseError(`${at}.id: two proofs for request id ${id}`);
    seen.add(id);
    if (typeof circuitId !== 'string' || circuitId.length === 0) throw new MalformedResponseError(`${at}.circuitId is missing`);
    if (!isRecord(proof) || !isPoint(proof.pi_a, 3) || !isPoint(proof.pi_c, 3) || !isPointRows(proof.pi_b)) {
      throw new MalformedResponseError(`${at}.proof must be a Groth16 proof {pi_a[3], pi_b[3][2], pi_c[3]} of decimal strings`);
    }
    // snarkjs writes affine points with z = 1 (pi_b: [1, 0]); the verifier ignores z, so any other z is refused here
    // rather than letting two encodings of one proof through.
    const { pi_a: pa, pi_b: pb, pi_c: pc, protocol } = proof;
    if (pa[2] !== '1' || pc[2] !== '1' || pb[2]?.[0] !== '1' || pb[2]?.[1] !== '0') {
      throw new MalformedResponseError(`${at}.proof: points must be affine as snarkjs writes them (pi_a[2] = pi_c[2] = "1", pi_b[2] = ["1", "0"])`);
    }
    if (protocol !== undefined && protocol !== 'groth16') throw new MalformedResponseError(`${at}.proof.protocol must be groth16`);
    const signals = p.pub_signals;
    if (!Array.isArray(signals) || signals.length === 0 || signals.length > MAX_SIGNALS || !signals.every(isDecimal)) {
      throw new MalformedResponseError(`${at}.pub_signals must be an array of decimal strings`);
    }
    return { ...p, id, circuitId, proof: { ...proof, pi_a: pa, pi_b: pb, pi_c: pc }, pub_signals: signals };
  });
  return { ...x, id, type: x.type, thid, from, ...(to !== undefined && { to }), body: { ...body, scope } };
}

/** Unverified: use it only to find the pending execution. */
export function peekThreadId(token: string): string {
  return decodeResponse(token, true).message.thid;
}
