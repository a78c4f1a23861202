/** No I/O: what needs the network is asked in the result. */
import { workerData } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { isRecord } from '../schemas/json.js';
import { createDocumentLoader, type DocumentLoader } from '../jsonld/documents.js';
import { installFastPoseidon } from './poseidon.js';
import { coldCheck, type ColdResult, type ColdTask } from './proof.js';

installFastPoseidon();

const REMOTE_DOCUMENTS = 256;

export function workerDocumentLoader(documents: Readonly<Record<string, unknown>> | undefined): {
  loader(scope: string): DocumentLoader;
  receive(scope: string, texts: Readonly<Record<string, string>> | undefined): void;
} {
  // Keyed by scope too: a thread may serve several verifiers, each with its own prefixes.
  const received = new LRUCache<string, string>({ max: REMOTE_DOCUMENTS });
  const offline = createDocumentLoader({
    documents,
    fetch: () => Promise.reject(new Error('no network in a verification thread')),
    timeoutMs: 1,
  });
  const textOf = offline.text ?? (async (url: string) => JSON.stringify((await offline(url)).document));
  return {
    loader: (scope) => {
      const text = (url: string): Promise<string> => {
        const received_ = received.get(`${scope}\n${url}`);
        return received_ === undefined ? textOf(url) : Promise.resolve(received_);
      };
      return Object.assign(async (url: string) => ({ contextUrl: null, documentUrl: url, document: JSON.parse(await text(url)) as unknown }), { text });
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
