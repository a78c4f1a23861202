/**
 * The one JSON-LD document loader. Offline by default: the operator's JSONLD_DOCUMENTS_FILE, then the bundled
 * documents, then URLs under an allowed remote prefix, fetched once; any other URL is DocumentUnavailable.
 */
import credentialsContext from 'credentials-context';
import { LRUCache } from 'lru-cache';
import { VerifiableConstants } from '../trust/iden3.js';
import { fetchJson, type FetchLike } from '../trust/http.js';
import idInformationContext from './documents/IDInformation-v1.jsonld.json' with { type: 'json' };
import idInformationSchema from './documents/IDInformation-v1.schema.json' with { type: 'json' };

import { ID_INFORMATION_CONTEXT_URL, ID_INFORMATION_SCHEMA_URL } from './urls.js';

export { ID_INFORMATION_CONTEXT_URL, ID_INFORMATION_SCHEMA_URL };

export class DocumentUnavailable extends Error {
  override name = 'DocumentUnavailable';
  constructor(readonly url: string, detail: string) {
    super(`JSON-LD document ${url} ${detail}`);
  }
}

interface RemoteDocument {
  contextUrl: null;
  documentUrl: string;
  document: unknown;
}

export type DocumentLoader = ((url: string) => Promise<RemoteDocument>) & {
  /** The document's JSON text as the loader holds it (a cheap way to see whether a document changed). */
  text?: (url: string) => Promise<string>;
};

export interface JsonLdLoader extends DocumentLoader {
  has(url: string): boolean;
  readonly urls: readonly string[];
}

export interface DocumentLoaderOptions {
  /** Win over bundled ones with the same URL. */
  documents?: Readonly<Record<string, unknown>>;
  includeBundled?: boolean;
  remoteDocumentPrefixes?: readonly string[];
  fetch?: FetchLike;
  timeoutMs?: number;
  maxBytes?: number;
}

function bundledDocuments(): Array<[string, unknown]> {
  const c = VerifiableConstants.JSONLD_SCHEMA;
  const a = VerifiableConstants.AUTH;
  return [
    [credentialsContext.CONTEXT_URL, credentialsContext.CONTEXT],
    [c.IDEN3_CREDENTIAL, JSON.parse(c.IDEN3_PROOFS_DEFINITION_DOCUMENT)],
    [c.IDEN3_DISPLAY_METHOD, JSON.parse(c.IDEN3_DISPLAY_METHOD_DEFINITION_DOCUMENT)],
    [a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL, JSON.parse(a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD)],
    [a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSON_URL, JSON.parse(a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSON)],
    [ID_INFORMATION_CONTEXT_URL, idInformationContext],
    [ID_INFORMATION_SCHEMA_URL, idInformationSchema],
  ];
}

const isDocument = (doc: unknown): boolean => typeof doc === 'object' && doc !== null;

/** Parsed on each load so that no caller can change what the next one reads. */
export function jsonLdDocuments(options: Pick<DocumentLoaderOptions, 'documents' | 'includeBundled'> = {}): Map<string, string> {
  const texts = new Map<string, string>();
  const add = (url: string, doc: unknown) => {
    if (!isDocument(doc)) throw new TypeError(`JSON-LD document ${url} must be a JSON object`);
    texts.set(url, JSON.stringify(doc));
  };
  if (options.includeBundled !== false) for (const [url, doc] of bundledDocuments()) add(url, doc);
  for (const [url, doc] of Object.entries(options.documents ?? {})) add(url, doc);
  return texts;
}

/** The offline documents that may define credential types: not the W3C envelope or iden3's proof and display contexts. */
export function credentialTypeDocuments(documents?: Readonly<Record<string, unknown>>): Array<[string, string]> {
  const c = VerifiableConstants.JSONLD_SCHEMA;
  const envelope = new Set<string>([credentialsContext.CONTEXT_URL, c.W3C_CREDENTIAL_2018, c.IDEN3_CREDENTIAL, c.IDEN3_DISPLAY_METHOD]);
  return [...jsonLdDocuments({ documents })].filter(([url]) => !envelope.has(url));
}

/**
 * Compared as parsed URLs (same origin, no user info, `..` resolved, no encoded slash or backslash a server might
 * decode into another path).
 */
export function remoteDocumentUrl(url: unknown, prefixes: readonly string[]): string | undefined {
  if (typeof url !== 'string') return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.username || u.password || /%2f|%5c|\\/i.test(u.pathname)) return undefined;
  for (const prefix of prefixes) {
    let p: URL;
    try {
      p = new URL(prefix);
    } catch {
      continue;
    }
    if (p.protocol !== u.protocol || p.host !== u.host) continue;
    const base = p.pathname;
    const under = base.endsWith('/') ? u.pathname.startsWith(base) : u.pathname === base || u.pathname.startsWith(`${base}/`);
    if (under) return u.href;
  }
  return undefined;
}

export function createDocumentLoader(options: DocumentLoaderOptions = {}): JsonLdLoader {
  const texts = jsonLdDocuments(options);
  const urls = Object.freeze([...texts.keys()]);
  const fetchImpl = options.fetch;
  const prefixes = fetchImpl ? (options.remoteDocumentPrefixes ?? []).filter((p) => /^https?:\/\/[^/]+\//i.test(p)) : [];
  const remote = new LRUCache<string, Promise<string>>({ max: 256 });
  const maxBytes = options.maxBytes ?? 1024 * 1024;

  const fetchRemote = async (fetcher: FetchLike, url: string): Promise<string> => {
    try {
      const doc = await fetchJson(fetcher, { url, timeoutMs: options.timeoutMs ?? 5000, maxBytes });
      if (typeof doc !== 'object' || doc === null) throw new Error('answer is not a JSON object');
      return JSON.stringify(doc);
    } catch (e) {
      remote.delete(url); // a failure is not kept: the next verification tries again
      throw new DocumentUnavailable(url, `could not be fetched: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  const textOf = async (url: string): Promise<string> => {
    let text = typeof url === 'string' ? texts.get(url) : undefined;
    if (text === undefined) {
      const target = remoteDocumentUrl(url, prefixes);
      if (target === undefined || fetchImpl === undefined) {
        throw new DocumentUnavailable(String(url), 'is not available offline (not bundled, not in JSONLD_DOCUMENTS_FILE and not under an allowed remote prefix)');
      }
      let pending = remote.get(target);
      if (pending === undefined) {
        pending = fetchRemote(fetchImpl, target);
        remote.set(target, pending);
      }
      text = await pending;
    }
    return text;
  };
  const load = async (url: string): Promise<RemoteDocument> => {
    const document: unknown = JSON.parse(await textOf(url));
    return { contextUrl: null, documentUrl: url, document };
  };
  return Object.assign(load, { has: (url: string) => texts.has(url), urls, text: textOf });
}
