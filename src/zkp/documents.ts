/**
 * The offline JSON-LD document loader. The verifier needs the JSON-LD context a query names (to compute the schema
 * hash and the claim path key of the attribute); nothing is fetched over the network: documents ship with the
 * service or come from a file the operator provides (ZKP_JSONLD_DOCUMENTS_FILE: iden3's KYC contexts, for one), and
 * every other URL is refused with DocumentNotAvailableError.
 *
 * Bundled: the W3C credentials v1 context (from the credentials-context package): a selective-disclosure answer
 * carries a verifiable presentation in it.
 */
import { readFileSync } from 'node:fs';
import credentialsContext from 'credentials-context';
import { DocumentNotAvailableError, ZkpOptionsError } from './errors.js';
import type { JsonLdDocumentLoader } from './sdk.js';

/** A JSON-LD DocumentLoader that also says which URLs it can serve (used to check scenarios at create time). */
export type OfflineDocumentLoader = JsonLdDocumentLoader & {
  has(url: string): boolean;
  readonly urls: readonly string[];
};

export interface DocumentLoaderOptions {
  /** More documents, URL -> JSON document; they win over the bundled ones with the same URL. */
  documents?: Readonly<Record<string, unknown>>;
  /** Serve the bundled documents (default true). */
  includeBundled?: boolean;
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The documents that ship with the service, URL -> document. */
const bundledDocuments: Readonly<Record<string, unknown>> = { [credentialsContext.CONTEXT_URL]: credentialsContext.CONTEXT };

export function createDocumentLoader(options: DocumentLoaderOptions = {}): OfflineDocumentLoader {
  const map = new Map<string, string>();
  const add = (docs: Readonly<Record<string, unknown>>) => {
    for (const [url, doc] of Object.entries(docs)) {
      if (!isRecord(doc) && !Array.isArray(doc)) throw new ZkpOptionsError(`JSON-LD document ${url} must be a JSON object`);
      // Stored as text and parsed on every load: no caller can change what the next one reads.
      map.set(url, JSON.stringify(doc));
    }
  };
  if (options.includeBundled !== false) add(bundledDocuments);
  if (options.documents) add(options.documents);
  const urls = Object.freeze([...map.keys()]);
  const loader = (async (url: string) => {
    const text = typeof url === 'string' ? map.get(url) : undefined;
    if (text === undefined) throw new DocumentNotAvailableError(String(url));
    return { contextUrl: null, documentUrl: url, document: JSON.parse(text) };
  }) as OfflineDocumentLoader;
  Object.defineProperty(loader, 'has', { value: (url: string) => map.has(url) });
  Object.defineProperty(loader, 'urls', { value: urls });
  return loader;
}

/**
 * Reads an operator-provided documents file (ZKP_JSONLD_DOCUMENTS_FILE): one JSON object mapping URL -> document,
 * the same shape as the bundled file. Throws ZkpOptionsError when it cannot be read or has the wrong shape.
 */
export function readDocumentsFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ZkpOptionsError(`cannot read the JSON-LD documents file ${path}: ${(e as Error).message}`);
  }
  if (!isRecord(parsed)) throw new ZkpOptionsError(`the JSON-LD documents file ${path} must hold one JSON object: URL -> document`);
  for (const [url, doc] of Object.entries(parsed)) {
    if (!isRecord(doc) && !Array.isArray(doc)) {
      throw new ZkpOptionsError(`the JSON-LD documents file ${path}: the document of ${url} is not a JSON object`);
    }
  }
  return parsed;
}
