/**
 * A worker thread of freshIdCredentials (bench/fixtures.mjs): issues fresh demo credentials #indices with its own
 * demo issuer instance (same seed, so the same DID and keys as every other instance) and posts each back as
 * { i, credential }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { freshIssueRequest } from './fixtures.mjs';

const { createDemoIssuer } = await import('../dist/trust/demo-issuer.js');
const issuer = await createDemoIssuer({ statusUrl: workerData.statusUrl });
for (const i of workerData.indices) {
  const credential = await issuer.issue(freshIssueRequest(i, workerData.dates));
  parentPort.postMessage({ i, credential });
}
parentPort.postMessage({ done: true });
