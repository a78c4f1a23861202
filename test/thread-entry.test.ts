/**
 * The file Piscina loads in a thread (src/thread-entry.cts): Piscina require()s it, and on Node 20.19+ require() of an
 * ES module loads the whole graph synchronously; a thread terminated in that window aborted the process in CI (V8
 * "IsGraphAsync must be used on an instantiated module"). The entry must therefore be CommonJS that require()s no ES
 * module, and still run the module it names. The threads run dist/ (built by test/build.global.ts).
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { compiledWorker } from '../src/worker-file.js';

/** Does in a thread what Piscina's worker does: require() the file; answers what the require cache then holds. */
function requireInThread(filename: string, entry: string, task?: unknown): Promise<{ cached: string[]; answer?: unknown; error?: string }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const handler = require(workerData.filename);
    const cached = Object.keys(require.cache);
    Promise.resolve(workerData.task === undefined ? undefined : handler(workerData.task))
      .then((answer) => parentPort.postMessage({ cached, answer }), (e) => parentPort.postMessage({ cached, error: String(e) }));
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { filename, entry, task } });
    worker.once('message', (m) => { resolve(m); void worker.terminate(); });
    worker.once('error', reject);
  });
}

describe('the thread entry Piscina loads', () => {
  it('is CommonJS that require()s no ES module (the thread\'s module is loaded with import())', async () => {
    const worker = compiledWorker(import.meta.url.replace('/test/', '/src/zkp/'), 'zkp/groth16-worker.js');
    expect(worker.filename).toMatch(/thread-entry\.cjs$/);
    const ours = (files: string[]) => files.filter((f) => f.includes('/dist/'));
    const { cached } = await requireInThread(worker.filename, worker.entry);
    expect(ours(cached)).toEqual([worker.filename]);
    // The check can fail: require() of the ES module itself (what Piscina did before) leaves it in the cache.
    const direct = await requireInThread(new URL(worker.entry).pathname, worker.entry);
    expect(ours(direct.cached)).toContain(new URL(worker.entry).pathname);
  });

  it('runs the default export of the module workerData.entry names, and refuses one without it', async () => {
    const groth16 = compiledWorker(import.meta.url.replace('/test/', '/src/zkp/'), 'zkp/groth16-worker.js');
    const malformed = await requireInThread(groth16.filename, groth16.entry, { proof: {}, vk: '{}' });
    // The groth16 check ran and answered false for a malformed proof, as the module itself does.
    expect(malformed).toMatchObject({ answer: false });
    const none = await requireInThread(groth16.filename, new URL('../dist/worker-file.js', import.meta.url).href, {});
    expect(none.error).toMatch(/has no default export/);
  });
});
