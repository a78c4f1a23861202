/**
 * The worker thread of the cold verification pool (pool.ts, piscina): runs coldCheck, the CPU-heavy part of verifying a
 * credential seen for the first time, off the request thread. No I/O here: what needs the network (the DID resolver, a
 * remote JSON-LD document) is asked back of the request thread in the result.
 *
 * workerData: { documents?: URL -> document } (the operator's JSON-LD documents, TrustOptions.documents), plus the
 * `mod` and `name` of webWorkerData() (src/worker-file.ts). Remote documents the request thread fetched come with a task and are
 * kept per thread (bounded).
 */
import { workerData } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { isRecord } from '../schemas/json.js';
import { createDocumentLoader, type DocumentLoader } from '../jsonld/documents.js';
import { installFastPoseidon } from './poseidon.js';
import { coldCheck, type ColdResult, type ColdTask } from './proof.js';

installFastPoseidon();

const REMOTE_DOCUMENTS = 256;

/** The loader of one thread: the operator's and the bundled documents, then the remote ones received with tasks. */
export function workerDocumentLoader(documents: Readonly<Record<string, unknown>> | undefined): {
  loader(scope: string): DocumentLoader;
  receive(scope: string, texts: Readonly<Record<string, string>> | undefined): void;
} {
  // Keyed by the verifier's scope and the URL: a thread may serve several verifiers (tests), each with its own prefixes.
  const received = new LRUCache<string, string>({ max: REMOTE_DOCUMENTS });
  const offline = createDocumentLoader({
    documents,
    fetch: () => Promise.reject(new Error('no network in a verification thread')),
    timeoutMs: 1,
  });
  return {
    loader: (scope) => async (url) => {
      const text = received.get(`${scope}\n${url}`);
      if (text === undefined) return offline(url);
      const document: unknown = JSON.parse(text);
      return { contextUrl: null, documentUrl: url, document };
    },
    receive(scope, texts) {
      for (const [url, text] of Object.entries(texts ?? {})) received.set(`${scope}\n${url}`, text);
    },
  };
}

const documents: unknown = isRecord(workerData) ? workerData.documents : undefined;
const thread = workerDocumentLoader(isRecord(documents) ? documents : undefined);

export default async function run(task: ColdTask): Promise<ColdResult> {
  const scope = task.scope ?? '';
  thread.receive(scope, task.documents);
  return coldCheck(task, { documentLoader: thread.loader(scope) });
}
