#!/usr/bin/env node
/**
 * `npm run demo:onchain`: an OnChainZKP scenario from start to finish on this machine, nothing to install or fetch.
 *
 * 1. Starts a local Hardhat node (chain eip155:31337) on 127.0.0.1.
 * 2. Deploys the iden3 verification stack of @iden3/contracts 3.4.0 (scripts/iden3-stack.mjs): State, the
 *    CredentialAtomicQuerySigV2Validator and the UniversalVerifier. The Groth16 verifier behind the validator is a
 *    stand-in that accepts every proof (no proving keys offline); the validator's own checks are the real ones.
 * 3. Starts the service (dist/server.js) against the node with a deployer key (Hardhat's well-known account 9, a
 *    demo key: never one of value), the verifier and the validator.
 * 4. Creates the scenario "IDInformation, personalData.birthDate before 2002-01-01" (the service's own credential
 *    type, whose context ships with it), with no deployment yet.
 * 5. Deploys it through the service (POST …/deployments): the service computes the request, sends setRequests with
 *    its key and answers the deployment, DeploymentStarted, with the request's type-1 id.
 * 6. Follows the deployment (GET its Location, as a user would) until the service's follower has confirmed its
 *    transaction and, reading the verifier, marked it Deployed.
 * 7. Submits a response for the demo address, as a dApp's frontend does after the wallet made the proof.
 * 8. Executes the scenario for the demo address and for another one, and prints both answers.
 *
 *   node scripts/demo-onchain.mjs        (after npm run build; `npm run demo:onchain` does both)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ID_INFORMATION_CONTEXT_URL } from '../dist/jsonld/urls.js';
import { circuitQuery, deployIden3Stack, OPERATORS, queryHashV2 } from './iden3-stack.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const TOKEN = 'demo-onchain-token-0123456789';
/** Hardhat's account 9, whose key every Hardhat install prints: a demo deployer, funded by the node. */
const DEMO_DEPLOYER_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6';
const say = (line = '') => process.stdout.write(`${line}\n`);

async function startNode() {
  process.env.HARDHAT_CONFIG = path.join(root, 'scripts', 'hardhat.config.cjs');
  const hre = require('hardhat');
  const { JsonRpcServer } = require('hardhat/internal/hardhat-network/jsonrpc/server');
  const server = new JsonRpcServer({ hostname: '127.0.0.1', port: 0, provider: hre.network.provider });
  const { port } = await server.listen();
  return { provider: hre.network.provider, server, url: `http://127.0.0.1:${port}` };
}

/**
 * The credential type of the demo: the service's own IDInformation, whose JSON-LD context ships with it (so nothing
 * is fetched); a request on iden3's KYCAgeCredential works the same with its context in JSONLD_DOCUMENTS_FILE.
 */
const ID_INFORMATION = {
  url: ID_INFORMATION_CONTEXT_URL,
  type: 'IDInformation',
  document: JSON.parse(fs.readFileSync(path.join(root, 'src', 'jsonld', 'documents', 'IDInformation-v1.jsonld.json'), 'utf8')),
};
const ATTRIBUTE = 'personalData.birthDate';
const BEFORE = 20020101;
/** An operator's own JSON-LD documents are handed on. */
const documents = process.env.JSONLD_DOCUMENTS_FILE ? { JSONLD_DOCUMENTS_FILE: process.env.JSONLD_DOCUMENTS_FILE } : {};

function startService(env) {
  const proc = spawn(process.execPath, [path.join(root, 'dist', 'server.js')], {
    cwd: root, env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...documents, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${out}`)), 30_000);
    const seen = (d) => {
      out += d;
      const m = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(out) ?? /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1] });
      }
    };
    proc.stdout.on('data', seen);
    proc.stderr.on('data', seen);
    proc.on('exit', (code) => reject(new Error(`the service exited with ${code}:\n${out}`)));
  });
}

/** One JSON call; a 503 (the service sheds load while it warms up on a busy machine) is tried again, as a client should. */
async function call(url, method, pathname, body) {
  return (await send(url, method, pathname, body)).json;
}

async function send(url, method, pathname, body) {
  let res;
  for (let attempt = 0; attempt < 20; attempt++) {
    res = await fetch(url + pathname, {
      method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    if (res.status !== 503) break;
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${pathname} answered ${res.status}: ${JSON.stringify(json)}`);
  return { json, location: res.headers.get('location') };
}

/** GETs the deployment until the follower has decided it: Deployed, or DeploymentFailed with its reason. */
async function followDeployment(url, location) {
  for (let attempt = 0; attempt < 240; attempt++) {
    const deployment = await call(url, 'GET', location);
    if (deployment.status === 'Deployed') return deployment;
    if (deployment.status !== 'DeploymentStarted') throw new Error(`deployment ${deployment.id} is ${deployment.status}: ${deployment.errorMessage ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`deployment ${location} was not Deployed within a minute`);
}

const node = await startNode();
let service;
const data = fs.mkdtempSync(path.join(os.tmpdir(), 'scs-demo-onchain-'));
try {
  say(`1. Local Hardhat node: ${node.url} (chain eip155:31337)`);
  const stack = await deployIden3Stack(node.provider);
  say('2. Deployed @iden3/contracts 3.4.0: State ' + stack.state + ', CredentialAtomicQuerySigV2Validator ' + stack.sigV2Validator +
    ', UniversalVerifier ' + stack.verifier + ' (Groth16 verifier: a stand-in that accepts every proof)');

  service = await startService({
    API_TOKENS: TOKEN, DATA_DIR: data, CHAIN_RPC_URLS: `eip155:31337=${node.url}`, CHAIN_DEPLOYER_KEY: DEMO_DEPLOYER_KEY,
    CHAIN_VERIFIER_ADDRESS: stack.verifier, CHAIN_VALIDATORS: stack.sigV2Validator, CHAIN_REPLACE_AFTER_MS: '0',
    // A local node mines a block per transaction and no other: one confirmation is as deep as it gets.
    CHAIN_CONFIRMATIONS: '1', CHAIN_FOLLOW_INTERVAL_MS: '250',
  });
  say(`3. Service: ${service.url} (CHAIN_RPC_URLS=eip155:31337=${node.url}, CHAIN_DEPLOYER_KEY=<Hardhat account 9>, ` +
    `CHAIN_VERIFIER_ADDRESS=${stack.verifier}, CHAIN_VALIDATORS=${stack.sigV2Validator}, CHAIN_CONFIRMATIONS=1)`);

  const scenario = {
    name: 'Born before 2002 (on chain)',
    type: 'OnChainZKP',
    queryConfigurations: [{
      id: 'born-before-2002',
      query: { type: ID_INFORMATION.type, context: ID_INFORMATION.url, requestId: 1, attribute: ATTRIBUTE, operator: '$lt', value: BEFORE },
    }],
    smartContractDeployments: [],
  };
  await call(service.url, 'POST', '/compliance/scenarios', { id: 'onchain-demo', input: scenario });
  say('4. Scenario "onchain-demo" created (its requestId a placeholder until it is deployed)');

  const { json: deployment, location } = await send(service.url, 'POST', '/compliance/scenarios/onchain-demo/deployments', {});
  const requestId = BigInt(deployment.requests[0].requestId);
  const [tx] = deployment.transactions;
  say(`5. Request ${requestId} set on the verifier by the service: deployment ${deployment.id} ${deployment.status}, ` +
    `transaction ${tx.txHash} ${tx.status}`);

  const deployed = await followDeployment(service.url, location);
  const [confirmed] = deployed.transactions;
  say(`6. Followed by the service (GET ${location}): transaction ${confirmed.status} in block ${confirmed.blockNumber}; ` +
    `deployment ${deployed.status} on ${deployed.address}`);

  // What the wallet proves: js-sdk's query of the rule, computed here independently of the service.
  const query = await circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt, BEFORE);
  const [, holder, stranger] = stack.accounts;
  await stack.submit(holder, requestId, { kind: 'v2', queryHash: queryHashV2(query) });
  say(`7. Response submitted from the demo address ${holder}`);

  for (const address of [holder, stranger]) {
    const [result] = await call(service.url, 'POST', '/compliance/scenarios/execute', { scenarioId: 'onchain-demo', address, credentials: [] });
    const r = result.result;
    say();
    say(`Execute for ${address}: ${r.status}`);
    say(JSON.stringify(r.result, null, 2));
    say(`RESULT ${address} ${r.status}`);
  }
} finally {
  service?.proc.kill('SIGTERM');
  await node.server.close();
  fs.rmSync(data, { recursive: true, force: true });
}
