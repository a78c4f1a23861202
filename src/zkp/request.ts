import { randomUUID } from 'node:crypto';
import { auth } from '@iden3/js-iden3-auth';
import { isCanonicalDid, isCanonicalIden3Did } from './did.js';
import { ZkpOptionsError, ZkpQueryError } from './errors.js';
import {
  LINKED_CIRCUIT, ZKP_DEFAULT_CIRCUIT_IDS, circuitOf, conditionOf, contextOf, nullifierSessionIdOf, toIden3Query,
  validateZkpQueries, type Iden3Query, type ZkpCircuitId, type ZkpDefaultCircuitId, type ZkpQuery, type ZkpQueryConfiguration,
  type ZkpQueryOptions,
} from './queries.js';

export const AUTHORIZATION_REQUEST_TYPE = 'https://iden3-communication.io/authorization/1.0/request';
export const AUTHORIZATION_RESPONSE_TYPE = 'https://iden3-communication.io/authorization/1.0/response';
export const PLAIN_MEDIA_TYPE = 'application/iden3comm-plain-json';
export const ZKP_MEDIA_TYPE = 'application/iden3-zkp-json';
/** A js-sdk wallet proves with the first of authV3-8-32, authV3 it can that this lists, else authV2. */
export const DEFAULT_ACCEPT = ['iden3comm/v1;env=application/iden3-zkp-json;circuitId=authV2,authV3,authV3-8-32;alg=groth16'] as const;

export interface ZkpScopeEntry {
  id: number;
  circuitId: ZkpCircuitId;
  query: Iden3Query;
  /** Decimal: it may exceed a JSON number. */
  params?: { nullifierSessionId: string };
}

export interface AuthorizationRequest {
  id: string;
  thid: string;
  typ: string;
  type: string;
  from: string;
  body: {
    accept?: string[];
    reason?: string;
    message?: string;
    callbackUrl: string;
    scope: ZkpScopeEntry[];
  };
  created_time?: number;
  expires_time?: number;
}

export interface PendingRule {
  objectId: string;
  requestId: number;
  circuitId: ZkpCircuitId;
  groupId?: number;
  nullifier?: boolean;
  disclose?: string;
}

/** Plain JSON, kept with the execution. A JWZ answer signs the thread id: an answer to another request is refused. */
export interface PendingAuthorization {
  thid: string;
  verifierDid: string;
  createdAt: number;
  /** Epoch seconds, as createdAt. */
  expiresAt: number;
  rules: PendingRule[];
  request: AuthorizationRequest;
}

export interface AuthorizationRequestOptions extends ZkpQueryOptions {
  callbackUrl: string;
  verifierDid: string;
  reason?: string;
  message?: string;
  /** Canonical issuer DIDs, or '*' (the default); a function answers per query. */
  allowedIssuers?: readonly string[] | ((query: ZkpQuery) => readonly string[]);
  ttlMs: number;
  now?: number;
  thid?: string;
  /** null leaves the field out. */
  accept?: readonly string[] | null;
}

export interface BuiltAuthorizationRequest {
  request: AuthorizationRequest;
  pending: PendingAuthorization;
}

export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

function checkIssuers(issuers: readonly string[], where: string): string[] {
  if (!Array.isArray(issuers) || issuers.length === 0) {
    throw new ZkpOptionsError(`${where}: allowedIssuers must hold '*' or at least one issuer DID (an empty list accepts no proof)`);
  }
  for (const issuer of issuers) {
    if (issuer !== '*' && (typeof issuer !== 'string' || !isCanonicalIden3Did(issuer))) {
      throw new ZkpOptionsError(`${where}: allowedIssuers entry ${JSON.stringify(issuer)} is not '*' nor an iden3 DID in canonical form`);
    }
  }
  return issuers.includes('*') ? ['*'] : [...new Set(issuers)];
}

export function buildAuthorizationRequest(
  queryConfigurations: readonly ZkpQueryConfiguration[],
  options: AuthorizationRequestOptions,
): BuiltAuthorizationRequest {
  const defaultCircuit: ZkpDefaultCircuitId = options.defaultCircuitId;
  if (!ZKP_DEFAULT_CIRCUIT_IDS.includes(defaultCircuit)) {
    throw new ZkpOptionsError(`defaultCircuitId must be one of ${ZKP_DEFAULT_CIRCUIT_IDS.join(', ')}`);
  }
  const problems = validateZkpQueries(queryConfigurations, options);
  if (problems.length > 0) throw new ZkpQueryError(problems);
  if (queryConfigurations.length === 0) {
    throw new ZkpQueryError([{ pointer: options.basePointer ?? '/queryConfigurations', message: 'an OffChainZKP scenario needs at least one query configuration' }]);
  }

  let callback: URL;
  try {
    callback = new URL(options.callbackUrl);
  } catch {
    throw new ZkpOptionsError(`callbackUrl ${JSON.stringify(options.callbackUrl)} is not an absolute URL`);
  }
  if (callback.protocol !== 'https:' && callback.protocol !== 'http:') throw new ZkpOptionsError('callbackUrl must be an http(s) URL');
  if (typeof options.verifierDid !== 'string' || !isCanonicalDid(options.verifierDid)) {
    throw new ZkpOptionsError(`verifierDid ${JSON.stringify(options.verifierDid)} is not a DID in canonical form (ZKP_VERIFIER_DID)`);
  }
  const ttlMs = options.ttlMs;
  if (!Number.isFinite(ttlMs) || ttlMs < 1000) throw new ZkpOptionsError('ttlMs must be at least 1000 (one second)');
  const now = options.now ?? Date.now();
  const thid = options.thid ?? randomUUID();
  if (typeof thid !== 'string' || thid.length === 0 || thid.length > 128) throw new ZkpOptionsError('thid must be a string of 1 to 128 characters');

  const scope: ZkpScopeEntry[] = [];
  const rules: PendingRule[] = [];
  queryConfigurations.forEach(({ id, query }, i) => {
    const context = contextOf(query, options.contexts);
    const requestId = query.requestId;
    if (context === undefined || typeof requestId !== 'number') {
      throw new ZkpQueryError([{ pointer: `${options.basePointer ?? '/queryConfigurations'}/${i}/query`, message: 'unchecked query' }]);
    }
    const issuers = typeof options.allowedIssuers === 'function'
      ? checkIssuers(options.allowedIssuers(query), `query configuration ${i}`)
      : checkIssuers(options.allowedIssuers ?? ['*'], 'options');
    const circuitId = circuitOf(query, defaultCircuit);
    const iden3Query = toIden3Query(query, context, issuers);
    const linkedEntry = circuitId === LINKED_CIRCUIT ? scope.find((e) => e.id === requestId) : undefined;
    if (linkedEntry) {
      // One linkedMultiQuery proof for the group's rules under this id: their conditions in one credentialSubject.
      const subject = (linkedEntry.query.credentialSubject ??= {});
      const condition = conditionOf(query);
      if (condition && query.attribute !== undefined) subject[query.attribute] = { ...subject[query.attribute], ...condition };
    } else {
      const sessionId = nullifierSessionIdOf(query);
      scope.push({ id: requestId, circuitId, query: iden3Query, ...(sessionId !== undefined && { params: { nullifierSessionId: sessionId } }) });
    }
    rules.push({
      objectId: id,
      requestId,
      circuitId,
      ...(query.groupId !== undefined && { groupId: query.groupId }),
      ...(nullifierSessionIdOf(query) !== undefined && { nullifier: true }),
      ...(query.operator === '$sd' && query.attribute !== undefined && { disclose: query.attribute }),
    });
  });

  const createdAt = Math.floor(now / 1000);
  const expiresAt = Math.floor((now + ttlMs) / 1000);
  const accept = options.accept === undefined ? [...DEFAULT_ACCEPT] : options.accept === null ? undefined : [...options.accept];
  const made = auth.createAuthorizationRequestWithMessage(
    options.reason ?? 'Compliance check',
    options.message,
    options.verifierDid,
    callback.href,
    { scope, expires_time: new Date(expiresAt * 1000), accept },
  );
  const request: AuthorizationRequest = {
    id: thid,
    thid,
    typ: made.typ ?? PLAIN_MEDIA_TYPE,
    type: made.type,
    from: made.from,
    body: {
      ...(accept ? { accept } : {}),
      reason: made.body.reason,
      ...(made.body.message !== undefined ? { message: made.body.message } : {}),
      callbackUrl: made.body.callbackUrl,
      scope,
    },
    created_time: createdAt,
    expires_time: expiresAt,
  };
  return {
    request: jsonCopy(request),
    pending: { thid, verifierDid: options.verifierDid, createdAt, expiresAt, rules, request: jsonCopy(request) },
  };
}
