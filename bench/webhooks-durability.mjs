/**
 * Webhook durability: N executions against the built service (node dist/server.js), which is killed with SIGKILL
 * K times while executes and deliveries are in flight and started again on the same database, with a receiver that
 * fails every third delivery (500). Every execution the service acknowledged (200) must reach the receiver at least
 * once: the outbox row is committed with the execution record, and deliveries are retried until a 2xx. Prints events
 * sent (acknowledged), received (distinct webhook-ids), lost, duplicates and signature failures, as JSON on the last
 * line (`WEBHOOKS_DURABILITY {...}`); exits 1 when any event is lost or any signature fails.
 *
 *   npm run build && node bench/webhooks-durability.mjs            # 1000 executions, 3 kills, SQLite
 *   EXECUTIONS=60 KILLS=1 node bench/webhooks-durability.mjs       # the test's size (test/webhooks.durability.test.ts)
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/webhooks-durability.mjs   # on PostgreSQL
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TOKEN = 'bench-webhooks-token-0123456789';
const SECRET = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;
const EXECUTIONS = Number(process.env.EXECUTIONS ?? 1000);
const KILLS = Number(process.env.KILLS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const DRAIN_TIMEOUT_MS = Number(process.env.DRAIN_TIMEOUT_MS ?? 120_000);

/** The receiver: verifies each delivery with standardwebhooks, fails every third with 500, counts by webhook-id. */
async function startReceiver() {
  const verifier = new Webhook(SECRET);
  const stats = { deliveries: 0, refused: 0, badSignatures: 0 };
  const accepted = new Map(); // executionId -> times accepted (2xx)
  const ids = new Set();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      stats.deliveries += 1;
      try {
        verifier.verify(body, req.headers);
      } catch {
        stats.badSignatures += 1;
        res.statusCode = 400;
        res.end();
        return;
      }
      if (stats.deliveries % 3 === 0) {
        stats.refused += 1;
        res.statusCode = 500;
        res.end();
        return;
      }
      const executionId = JSON.parse(body).data.executionId;
      accepted.set(executionId, (accepted.get(executionId) ?? 0) + 1);
      ids.add(req.headers['webhook-id']);
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { stats, accepted, ids, url: `http://127.0.0.1:${server.address().port}/hook`, close: () => new Promise((r) => server.close(r)) };
}

/** node dist/server.js on the given store; resolves once it listens. */
function startService(env) {
  const child = spawn(process.execPath, [path.join(root, 'dist/server.js')], {
    cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  let listening = false;
  return new Promise((resolve, reject) => {
    // A start on a busy machine (the verification threads warming up) can take a while.
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${out}\n${err}`)), 120_000);
    child.stdout.on('data', (d) => {
      if (listening) return;
      out += d;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        listening = true;
        clearTimeout(timer);
        resolve({ child, base: m[1], exited: new Promise((r) => child.once('exit', r)) });
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`service exited (${code ?? signal}) before listening:\n${out}\n${err}`)));
  });
}

async function call(base, method, url, body) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

const credential = () => ({
  id: `urn:uuid:${crypto.randomUUID()}`,
  '@context': ['https://www.w3.org/2018/credentials/v1'],
  type: ['VerifiableCredential', 'IDInformation'],
  issuanceDate: new Date(Date.now() - 86_400_000).toISOString(),
  expirationDate: new Date(Date.now() + 365 * 86_400_000).toISOString(),
  credentialSubject: { id: 'did:iden3:polygon:amoy:x6x5sor7zpycB7z7Q9348dXJxZ9s5b9AgmPeSccZz', reviewAnswer: 'GREEN' },
  credentialStatus: { id: 'https://issuer.example/status/1', type: 'SparseMerkleTreeProof', revocationNonce: 1 },
  issuer: 'did:iden3:polygon:amoy:xBdqiqz3yVT79NEAuNaqKSDZ6a5V6q8Ph66i5d2tT',
  credentialSchema: { id: 'https://schemas.example/IDInformation.json', type: 'JsonSchema2023' },
  proof: { type: 'BJJSignature2021' },
});

async function main() {
  const receiver = await startReceiver();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-webhooks-'));
  const pgUrl = process.env.DATABASE_URL?.trim();
  const schema = pgUrl ? `webhooks_${process.pid}_${Date.now().toString(36)}` : undefined;
  const env = {
    HOST: '127.0.0.1', PORT: '0', API_TOKENS: TOKEN, LOG_LEVEL: 'info', DATA_DIR: dataDir,
    CREDENTIAL_VERIFICATION: 'off', MAX_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_MAX: '100000000',
    WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET, WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_BASE_MS: '50',
    WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_MAX_ATTEMPTS: '30',
    ...(pgUrl && { DATABASE_URL: pgUrl, DATABASE_SCHEMA: schema }),
  };
  let service = await startService(env);
  const created = await call(service.base, 'POST', '/compliance/scenarios', {
    id: 'kyc',
    input: {
      name: 'KYC', type: 'ChallengeQuery', smartContractDeployments: [],
      queryConfigurations: [{ id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } }],
    },
  });
  if (created.status !== 201) throw new Error(`scenario: ${created.status} ${JSON.stringify(created.body)}`);

  const acknowledged = new Set();
  let unanswered = 0;
  let next = 0;
  const t0 = performance.now();
  // Kill points: after EXECUTIONS × k/(KILLS+1) executions have started, with CONCURRENCY executes in flight.
  const killAt = Array.from({ length: KILLS }, (_, k) => Math.floor((EXECUTIONS * (k + 1)) / (KILLS + 1)));
  let restarting;
  const restart = async () => {
    const dying = service;
    dying.child.kill('SIGKILL');
    await dying.exited;
    service = await startService(env);
  };
  const worker = async () => {
    for (;;) {
      if (restarting) await restarting;
      if (next >= EXECUTIONS) return;
      const i = next++;
      if (killAt.includes(i)) restarting = restart();
      try {
        const res = await call(service.base, 'POST', '/compliance/scenarios/execute', { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', credentials: [credential()], scenarioId: 'kyc' });
        if (res.status === 200) acknowledged.add(res.body[0].executionId);
        else unanswered += 1;
      } catch {
        unanswered += 1; // the connection died with the service: not acknowledged, so not counted as sent
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  if (restarting) await restarting;
  const executeSeconds = (performance.now() - t0) / 1000;

  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  const missing = () => [...acknowledged].filter((id) => !receiver.accepted.has(id));
  while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const lost = missing();
  const drainSeconds = (performance.now() - t0) / 1000 - executeSeconds;

  service.child.kill('SIGTERM');
  await service.exited;
  await receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (schema) {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }

  const accepted = [...receiver.accepted.values()];
  const result = {
    store: pgUrl ? 'postgres' : 'sqlite',
    executions: EXECUTIONS,
    kills: KILLS,
    sent: acknowledged.size,
    notAcknowledged: unanswered,
    received: acknowledged.size - lost.length,
    lost: lost.length,
    // Deliveries the receiver took more than once (at-least-once: a kill between the send and its record).
    duplicates: accepted.reduce((n, c) => n + c - 1, 0),
    // Events of executions the service recorded but could not acknowledge before it was killed.
    extra: receiver.accepted.size - (acknowledged.size - lost.length),
    deliveries: receiver.stats.deliveries,
    refusedByReceiver: receiver.stats.refused,
    badSignatures: receiver.stats.badSignatures,
    executeSeconds: Number(executeSeconds.toFixed(1)),
    drainSeconds: Number(drainSeconds.toFixed(1)),
  };
  console.log(`events sent ${result.sent}, received ${result.received}, lost ${result.lost} (duplicates ${result.duplicates}, ` +
    `${result.kills} kill -9, receiver refused ${result.refusedByReceiver} of ${result.deliveries} deliveries)`);
  console.log(`WEBHOOKS_DURABILITY ${JSON.stringify(result)}`);
  if (result.lost > 0 || result.badSignatures > 0) process.exitCode = 1;
}

await main();
