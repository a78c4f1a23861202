/**
 * OffChainZKP walkthrough (docs/offchain-walkthrough.md, which lists the options): starts the service, creates and
 * executes an OffChainZKP scenario, and prints the authorization request as JSON, deep link and QR code.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import qrcode from 'qrcode';
import { ID_INFORMATION_CONTEXT_URL } from '../jsonld/urls.js';
import { isRecord } from '../schemas/json.js';

/** Made from the Ethereum address 0x1111…1111: no one's key, a demo only. */
const DEMO_VERIFIER_DID = 'did:iden3:polygon:amoy:x6x5sor7zpxYggmPs5jcaiu5TEWAU2knvRifZbzCp';
const DEMO_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const TOKEN = 'demo-offchain-token-0123456789';
const KYC_V3 = 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run demo:offchain -- [--port n] [--public-base-url url] [--verifier-did did] [--address 0x...] [--kyc] [--once]\n`);
  process.exit(2);
}

function lanAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    const ipv4 = list?.find((i) => i.family === 'IPv4' && !i.internal);
    if (ipv4) return ipv4.address;
  }
  return '127.0.0.1';
}

function parseArgs(argv: string[]) {
  const out = { port: 3100, publicBaseUrl: '', verifierDid: DEMO_VERIFIER_DID, address: DEMO_ADDRESS, once: false, kyc: false };
  for (let i = 0; i < argv.length; i++) {
    const next = () => argv[++i] ?? usage(`${argv[i - 1]} needs a value`);
    switch (argv[i]) {
      case '--port': out.port = Number(next()); break;
      case '--public-base-url': out.publicBaseUrl = next(); break;
      case '--verifier-did': out.verifierDid = next(); break;
      case '--address': out.address = next(); break;
      case '--once': out.once = true; break;
      case '--kyc': out.kyc = true; break;
      default: usage(`unknown option ${argv[i]}`);
    }
  }
  if (!Number.isInteger(out.port) || out.port < 1 || out.port > 65535) usage('--port must be a TCP port');
  out.publicBaseUrl ||= `http://${lanAddress()}:${out.port}`;
  return out;
}

/**
 * The demo's scenario: born before 2008, one account per person. On the service's own IDInformation type by default;
 * with --kyc on iden3's KYCAgeCredential (what wallets hold today; its kyc-v3 context in JSONLD_DOCUMENTS_FILE).
 */
const scenarioOf = (kyc: boolean) => ({
  id: 'offchain-demo',
  input: {
    name: 'Adult, one account per person',
    description: 'OffChainZKP walkthrough',
    type: 'OffChainZKP',
    smartContractDeployments: [],
    queryConfigurations: [{
      id: 'q-adult',
      query: {
        ...(kyc
          ? { type: 'KYCAgeCredential', context: KYC_V3, attribute: 'birthday' }
          : { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, attribute: 'personalData.birthDate' }),
        requestId: 1, operator: '$lt', value: 20080101, circuitId: 'credentialAtomicQueryV3', params: { nullifierSessionId: 20260101 },
      },
    }],
  },
});

/** Sent again while the service sheds load (503) as it warms up. */
async function send(url: string, init: RequestInit): Promise<Response> {
  for (let i = 0; ; i++) {
    const res = await fetch(url, init);
    if (res.status !== 503 || i >= 30) return res;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const base = `http://127.0.0.1:${args.port}`;
  const server = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'server.js')], {
    env: {
      ...process.env,
      PORT: String(args.port), HOST: '0.0.0.0', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'scs-demo-')), API_TOKENS: TOKEN,
      ZKP_VERIFIER_DID: args.verifierDid, PUBLIC_BASE_URL: args.publicBaseUrl, LOG_LEVEL: 'warn', WORKERS: '1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = () => { server.kill('SIGTERM'); };
  process.on('SIGINT', () => { stop(); process.exit(0); });
  server.on('exit', (code) => { if (code) process.exit(code); });
  try {
    for (let i = 0; ; i++) {
      if (i > 150) throw new Error(`the service did not start on port ${args.port}`);
      if (await fetch(`${base}/health/live`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const scenario = scenarioOf(args.kyc);
    const created = await send(`${base}/compliance/scenarios`, { method: 'POST', headers, body: JSON.stringify(scenario) });
    if (created.status !== 201) throw new Error(`create answered ${created.status}: ${await created.text()}`);
    const executed = await send(`${base}/compliance/scenarios/execute`, {
      method: 'POST', headers, body: JSON.stringify({ scenarioId: scenario.id, address: args.address, credentials: [] }),
    });
    const results: unknown = await executed.json();
    const first: unknown = Array.isArray(results) ? results[0] : undefined;
    const executionId = isRecord(first) ? first.executionId : undefined;
    const request = isRecord(first) && isRecord(first.result) ? first.result.authorizationRequest : undefined;
    if (!request) throw new Error(`execute answered no authorization request: ${JSON.stringify(results)}`);
    const link = `iden3comm://?i_m=${encodeURIComponent(Buffer.from(JSON.stringify(request)).toString('base64'))}`;
    const out = (s = '') => process.stdout.write(`${s}\n`);
    out('1. The scenario was created and executed; the execution is pending. Its authorization request:');
    out(JSON.stringify(request, null, 2));
    out();
    out('2. As a deep link (open it on the phone that holds the wallet):');
    out(link);
    out();
    out('3. As a QR code (scan it with the wallet app):');
    out(await qrcode.toString(link, { type: 'terminal', small: true }));
    out(`The wallet POSTs its proof to ${args.publicBaseUrl}/compliance/executions/${String(executionId)}/zkp-response`);
    if (args.once) return stop();
    out(`Watch the execution: curl -s -H 'Authorization: Bearer ${TOKEN}' ${base}/compliance/executions/${String(executionId)}`);
    out('The service keeps running for the wallet: Ctrl-C stops it.');
  } catch (err) {
    stop();
    throw err;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo:offchain: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
