/**
 * The file Piscina loads in each thread. Piscina loads it with require(), which on Node 20.19+ also loads an ES module,
 * synchronously; a thread terminated meanwhile (a shutdown while threads still load the iden3 libraries) then aborts
 * the whole process (V8: "IsGraphAsync must be used on an instantiated module", seen in CI). This CommonJS file loads
 * the thread's ES module with import(), whose termination Node handles.
 */
import { workerData } from 'node:worker_threads';

type Handler = (task: unknown) => unknown;
let handler: Promise<Handler> | undefined;

function load(): Promise<Handler> {
  const entry: unknown = (workerData as { entry?: unknown } | null)?.entry;
  if (typeof entry !== 'string') return Promise.reject(new TypeError('workerData.entry names no module'));
  return import(entry).then((m: { default?: unknown }) => {
    if (typeof m.default !== 'function') throw new TypeError(`${entry} has no default export`);
    return m.default as Handler;
  });
}

export = async function run(task: unknown): Promise<unknown> {
  handler ??= load();
  return (await handler)(task);
};
