/**
 * Demo credentials for a first execution (README), signed by the deterministic demo issuer. Revocation status is at
 * `{status-url}/{nonce}`: `--serve` answers it here, else a service with DEMO_ISSUER=1 does.
 * The demo issuer's seed is public: never trust its DID outside a demo.
 */
import http from 'node:http';
import { parseAddress } from '../domain/address.js';
import { DEMO_REVOKED_NONCE, createDemoIssuer, nonceFromStatusPath, revokeDemoNonce } from '../trust/demo-issuer.js';

const DEMO_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: node dist/scripts/demo-credentials.js [--address 0x...] [--scenario-id id] [--status-url url] [--serve] [--port n] [--expires-in-days n] [--expired] [--revoked] [--proof bjj|mtp|both] [--body]\n`);
  process.exit(2);
}

function parseArgs(argv: string[]) {
  const out: {
    address: string; scenarioId: string; statusUrl?: string; serve: boolean; port: number; days: number; body: boolean; expired: boolean;
    revoked: boolean;
    proof: 'bjj' | 'mtp' | 'both';
  } = {
    address: DEMO_ADDRESS,
    scenarioId: '<your scenario id>',
    serve: false,
    port: 3999,
    days: 365,
    body: false,
    proof: 'bjj',
    expired: false,
    revoked: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case '--address': out.address = value(); break;
      case '--scenario-id': out.scenarioId = value(); break;
      case '--status-url': out.statusUrl = value(); break;
      case '--serve': out.serve = true; break;
      case '--body': out.body = true; break;
      case '--expired': out.expired = true; break;
      case '--revoked': out.revoked = true; break;
      case '--port': out.port = Number(value()); break;
      case '--expires-in-days': out.days = Number(value()); break;
      case '--proof': {
        const v = value();
        if (v !== 'bjj' && v !== 'mtp' && v !== 'both') usage('--proof must be bjj, mtp or both');
        out.proof = v;
        break;
      }
      case '--help': case '-h': usage('Issues demo credentials signed by the demo issuer.'); break;
      default: usage(`unknown option ${arg}`);
    }
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) usage('--port must be a port number');
  if (!Number.isInteger(out.days) || out.days < 1 || out.days > 3650) usage('--expires-in-days must be from 1 to 3650');
  const parsed = parseAddress(out.address);
  if (!parsed.ok || parsed.namespace !== 'eip155') usage('--address must be an EVM address (0x followed by 40 hex digits)');
  return out;
}

const args = parseArgs(process.argv.slice(2));
const statusUrl = args.statusUrl ?? (args.serve
  ? `http://127.0.0.1:${args.port}/status`
  : `http://127.0.0.1:${process.env.PORT || 3000}/demo-issuer/status`);

const issuer = await createDemoIssuer({ statusUrl });
const now = Date.now();
const subjectId = `did:pkh:eip155:1:${args.address}`;
const credential = await issuer.issue({
  subjectId,
  claims: {
    journeyId: '9b2d1f3e-6c1a-4f0e-8d7b-2a5c4e6f8a10',
    reviewAnswer: 'GREEN',
    documentType: 'PASSPORT',
    isSandbox: true,
    personalData: {
      firstName: 'Alice',
      lastName: 'Demo',
      age: 30,
      citizenship: 'FRA',
      country: 'FRA',
      birthDate: 19950101,
      countryOfBirth: 'FRA',
    },
  },
  // The holder's data is the same when --expired, so only the expiry fails.
  issuanceDate: new Date(args.expired ? now - 2 * 86_400_000 : now - 60_000),
  expirationDate: new Date(args.expired ? now - 86_400_000 : now + args.days * 86_400_000),
  proof: args.proof,
  ...(args.revoked && { nonce: DEMO_REVOKED_NONCE }),
});
// After issuing: the credentials carry the state before the revocation.
if (args.serve) await revokeDemoNonce(issuer);

let server: http.Server | undefined;
if (args.serve) {
  const serving = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const nonce = req.method === 'GET' && path.startsWith('/status/') ? nonceFromStatusPath(path) : undefined;
    if (nonce === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    issuer.status(nonce).then(
      (doc) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc)),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    serving.once('error', reject);
    serving.listen(args.port, '127.0.0.1', resolve);
  });
  server = serving;
}

const executeBody = { scenarioId: args.scenarioId, address: args.address, credentials: [credential] };
process.stdout.write(args.body
  ? `${JSON.stringify(executeBody)}\n`
  : `${JSON.stringify({
  issuer: issuer.did,
  env: { TRUSTED_ISSUERS: issuer.did, CREDENTIAL_VERIFICATION: 'strict' },
  statusUrl: issuer.statusUrl,
  executeBody,
}, null, 2)}\n`);

const running = server;
if (running) {
  process.stderr.write(`demo issuer ${issuer.did}: serving revocation statuses at ${issuer.statusUrl}/<nonce> (Ctrl-C to stop)\n`);
  const stop = () => running.close(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
