/**
 * The JSON-LD document loader of the proof check. Verifying a BJJSignature2021 proof recomputes the credential's
 * core claim, which merklizes the credential with its JSON-LD @context: every context URL must be served here.
 *
 * Offline by default. Served, in this order:
 * 1. documents handed in (TrustOptions.documents: URL -> document, e.g. read from an operator's file);
 * 2. documents bundled with the service: the W3C credentials v1, iden3 proofs, iden3 display method and AuthBJJ
 *    contexts (from @0xpolygonid/js-sdk's constants), and the IDInformation context and JSON schema of this service
 *    (src/trust/documents/IDInformation-v1.*); other issuers' contexts (iden3's KYC ones among them) come from the
 *    operator (JSONLD_DOCUMENTS_FILE, or step 3);
 * 3. URLs starting with one of TrustOptions.remoteDocumentPrefixes: fetched once (timeout, size limit, no redirect)
 *    and kept in memory for the life of the process.
 * Any other URL is refused with DocumentUnavailable (the verdict is then `error`: the proof cannot be checked).
 */
import { VerifiableConstants } from './iden3.js';
import idInformationContext from './documents/IDInformation-v1.jsonld.json' with { type: 'json' };
import idInformationSchema from './documents/IDInformation-v1.schema.json' with { type: 'json' };
import { fetchJson, type FetchLike } from './http.js';
import { LRUCache } from 'lru-cache';

/** The URL of the IDInformation JSON-LD context this service ships (used by the demo issuer). */
export const ID_INFORMATION_CONTEXT_URL = 'https://compliance.example/schemas/IDInformation-v1.jsonld';
/** The URL of the IDInformation JSON schema this service ships (credentialSchema.id of demo credentials). */
export const ID_INFORMATION_SCHEMA_URL = 'https://compliance.example/schemas/IDInformation-v1.json';

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

export type DocumentLoader = (url: string) => Promise<RemoteDocument>;

/** The documents bundled with the service: URL -> JSON text (parsed on each load, so no caller can alter them). */
function bundled(): Map<string, string> {
  const c = VerifiableConstants.JSONLD_SCHEMA;
  const a = VerifiableConstants.AUTH;
  return new Map<string, string>([
    [c.W3C_CREDENTIAL_2018, c.W3C_VC_DOCUMENT_2018],
    [c.IDEN3_CREDENTIAL, c.IDEN3_PROOFS_DEFINITION_DOCUMENT],
    [c.IDEN3_DISPLAY_METHOD, c.IDEN3_DISPLAY_METHOD_DEFINITION_DOCUMENT],
    [a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL, a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD],
    [a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSON_URL, a.AUTH_BJJ_CREDENTIAL_SCHEMA_JSON],
    [ID_INFORMATION_CONTEXT_URL, JSON.stringify(idInformationContext)],
    [ID_INFORMATION_SCHEMA_URL, JSON.stringify(idInformationSchema)],
  ]);
}

export interface DocumentLoaderOptions {
  documents?: Readonly<Record<string, unknown>>;
  remoteDocumentPrefixes?: readonly string[];
  fetch: FetchLike;
  timeoutMs: number;
  /** Answers larger than this are refused (default 1 MiB). */
  maxBytes?: number;
}

export interface TrustDocumentLoader extends DocumentLoader {
  /** Whether the URL is served without the network (handed in or bundled). */
  has(url: string): boolean;
}

/**
 * The URL to fetch for a document URL, if it lies under one of the allowed prefixes, compared as parsed and normalised
 * URLs: same scheme, host and port; no user or password; a path under the prefix's (`..`, `%2e%2e` and the like
 * resolved first; a prefix without a final `/` matches itself or what follows a `/`); no encoded slash or backslash
 * (`%2f`, `%5c`), which a server may decode into another path. Else undefined. The answer is the normalised URL: it is
 * what gets fetched, never the raw text.
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

export function createDocumentLoader(options: DocumentLoaderOptions): TrustDocumentLoader {
  const texts = bundled();
  for (const [url, doc] of Object.entries(options.documents ?? {})) {
    if (typeof doc !== 'object' || doc === null) throw new TypeError(`JSON-LD document ${url} must be a JSON object`);
    texts.set(url, JSON.stringify(doc));
  }
  const prefixes = (options.remoteDocumentPrefixes ?? []).filter((p) => /^https?:\/\/[^/]+\//i.test(p));
  const remote = new LRUCache<string, Promise<string>>({ max: 256 });
  const maxBytes = options.maxBytes ?? 1024 * 1024;

  const fetchRemote = async (url: string): Promise<string> => {
    try {
      const doc = await fetchJson(options.fetch, { url, timeoutMs: options.timeoutMs, maxBytes });
      if (typeof doc !== 'object' || doc === null) throw new Error('answer is not a JSON object');
      return JSON.stringify(doc);
    } catch (e) {
      remote.delete(url); // a failure is not kept: the next verification tries again
      throw new DocumentUnavailable(url, `could not be fetched: ${(e as Error).message}`);
    }
  };

  const loader = (async (url: string): Promise<RemoteDocument> => {
    let text = texts.get(url);
    if (text === undefined) {
      const target = remoteDocumentUrl(url, prefixes);
      if (target === undefined) {
        throw new DocumentUnavailable(String(url), 'is not available offline (not bundled and not under an allowed remote prefix)');
      }
      let pending = remote.get(target);
      if (pending === undefined) {
        pending = fetchRemote(target);
        remote.set(target, pending);
      }
      text = await pending;
    }
    return { contextUrl: null, documentUrl: url, document: JSON.parse(text) as unknown };
  }) as TrustDocumentLoader;
  Object.defineProperty(loader, 'has', { value: (url: string) => texts.has(url) });
  return loader;
}
