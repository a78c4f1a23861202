/**
 * A child process of bench/engine.mjs: @0xpolygonid/js-sdk's own verification of demo credentials, measured in CPU
 * time of this process alone.
 *
 * Why a process of its own: the service's verifier replaces @iden3/js-crypto's Poseidon in its thread by a faster,
 * remembering one (src/trust/poseidon.ts, installed by createCredentialVerifier), and js-sdk computes its hashes
 * through that same object. In engine.mjs's process, js-sdk would run with the service's Poseidon and with the hashes
 * the service's verifier remembered of the same credential: not js-sdk's own path. Here js-crypto's Poseidon is the
 * one js-sdk ships with; the originals are captured before anything else loads and put back (and reported) should
 * anything replace them.
 *
 * What one verification is (everything js-sdk does to accept a BJJSignature2021 credential, nothing more):
 *   W3CCredential.fromJSON(c).verifyProof(ProofType.BJJSignature, RESOLVER, { credStatusResolverRegistry,
 *     merklizeOptions: { documentLoader } })
 *     = the core claim recomputed from the credential (JSON-LD merklization) and compared, the BJJ signature, the
 *       issuer's DID document (validateDIDDocumentAuth: the resolver, answered by the fetch stub below), the issuer
 *       key's revocation status through the registry (tree state, non-revocation proof);
 *   + the credential's own revocation status, as js-sdk resolves it (CredentialWallet.getRevocationStatusFromCredential,
 *     through the same registry) and checked as verifyProof checks the key's (validateTreeState, the non-revocation
 *     proof against the revocation tree root, not `existence`). js-sdk 1.45 has no single call for this.
 *
 * Offline: the registry's SparseMerkleTreeProof resolver answers from a demo issuer instance in this process
 * (`status(nonce)`, what the status URL would answer, turned into a RevocationStatus as js-sdk's IssuerResolver does);
 * the JSON-LD documents come from js-sdk's constants and the service's IDInformation context file; js-sdk's
 * resolveDIDDocumentAuth calls the global fetch with `${RESOLVER}/${did}?state=...`, and only that URL is answered
 * here, as a resolver answers for an issuer state never published (published: false; js-sdk then accepts it only if
 * it is the DID's genesis state, which it checks itself). Any other fetch is refused.
 *
 * Iden3SparseMerkleTreeProof credentials (bench/cold-mtp.mjs): `proofType: 'Iden3SparseMerkleTreeProof'` and
 * `published: true` (the resolver then answers their states as published), the same revocation check after.
 *
 * Protocol (process.send): {id, op: 'verify', credential, statuses?: 'revoking', proofType?, published?} -> {id, ok, error?, cpuMs, wallMs};
 * {id, op: 'revoke', nonce} revokes a nonce in the second ("revoking") demo issuer instance; {id, op: 'status', nonce}
 * -> {id, cpuMs} (the CPU time of one demo status answer here). Prints nothing on success.
 */
import { poseidon } from '@iden3/js-crypto';

const ORIGINAL = { hash: poseidon.hash, hashBytes: poseidon.hashBytes };
let replaced = 0;
const pristine = () => {
  if (poseidon.hash !== ORIGINAL.hash || poseidon.hashBytes !== ORIGINAL.hashBytes) {
    replaced++;
    poseidon.hash = ORIGINAL.hash;
    poseidon.hashBytes = ORIGINAL.hashBytes;
  }
};

const fs = await import('node:fs');
const path = await import('node:path');
const { fileURLToPath } = await import('node:url');
const sdk = await import('@0xpolygonid/js-sdk');
const { Proof, Hash, verifyProof } = await import('@iden3/js-merkletree');
const { createDemoIssuer } = await import('../dist/trust/demo-issuer.js');
const { DEMO_STATUS_URL } = await import('./fixtures.mjs');
pristine();

const here = path.dirname(fileURLToPath(import.meta.url));
const RESOLVER = 'http://did-resolver.bench.invalid/1.0/identifiers';

// JSON-LD documents: js-sdk's own constants, and the IDInformation context the demo issuer issues with.
const ID_CONTEXT_URL = 'https://compliance.example/schemas/IDInformation-v1.jsonld';
const readContext = () => {
  for (const dir of ['../dist/jsonld/documents', '../src/jsonld/documents']) {
    try {
      return fs.readFileSync(path.resolve(here, dir, 'IDInformation-v1.jsonld.json'), 'utf8');
    } catch {
      // try the next
    }
  }
  throw new Error('IDInformation-v1.jsonld.json not found in dist/jsonld/documents or src/jsonld/documents');
};
const J = sdk.VerifiableConstants.JSONLD_SCHEMA;
const A = sdk.VerifiableConstants.AUTH;
const documents = new Map([
  [J.W3C_CREDENTIAL_2018, J.W3C_VC_DOCUMENT_2018],
  [J.IDEN3_CREDENTIAL, J.IDEN3_PROOFS_DEFINITION_DOCUMENT],
  [J.IDEN3_DISPLAY_METHOD, J.IDEN3_DISPLAY_METHOD_DEFINITION_DOCUMENT],
  [A.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD_URL, A.AUTH_BJJ_CREDENTIAL_SCHEMA_JSONLD],
  [ID_CONTEXT_URL, readContext()],
]);
const documentLoader = async (url) => {
  const text = documents.get(url);
  if (text === undefined) throw new Error(`JSON-LD document ${url} is not available offline`);
  return { contextUrl: null, documentUrl: url, document: JSON.parse(text) };
};

// The DID resolver, for js-sdk's validateDIDDocumentAuth only: `published` as the current request says (false for the
// BJJ credentials, whose key state is genesis; true for the MTP ones, whose states the issuer published).
let answerPublished = false;
globalThis.fetch = async (input, init) => {
  const url = String(input?.url ?? input);
  if (url.startsWith(`${RESOLVER}/`)) {
    const did = decodeURIComponent(url.slice(RESOLVER.length + 1).split('?')[0]);
    const state = new URL(url).searchParams.get('state');
    return new Response(JSON.stringify({
      didDocument: {
        '@context': ['https://www.w3.org/ns/did/v1'],
        id: did,
        verificationMethod: [{ id: `${did}#state-info`, type: 'Iden3StateInfo2023', controller: did, published: answerPublished, info: { id: did, state } }],
      },
    }), { headers: { 'content-type': 'application/json' } });
  }
  throw new Error(`js-sdk bench: no network (${url})`);
};

const demo = await createDemoIssuer({ statusUrl: DEMO_STATUS_URL });
const revoking = await createDemoIssuer({ statusUrl: DEMO_STATUS_URL });
const registryOf = (issuer) => {
  const registry = new sdk.CredentialStatusResolverRegistry();
  // js-sdk's IssuerResolver fetches credentialStatus.id and answers toRevocationStatus(json): the same, in process.
  registry.register(sdk.CredentialStatusType.SparseMerkleTreeProof, {
    async resolve(status) {
      const { mtp, issuer: state } = await issuer.status(BigInt(status.revocationNonce ?? 0));
      return { mtp: Proof.fromJSON(mtp), issuer: state };
    },
  });
  return registry;
};
const registries = { demo: registryOf(demo), revoking: registryOf(revoking) };
const wallets = Object.fromEntries(Object.entries(registries).map(([k, r]) => [k, new sdk.CredentialWallet(new sdk.CredentialStorage(new sdk.InMemoryDataSource()), r)]));
pristine();

/** js-sdk's verification of one credential (its `proofType` proof, BJJ by default): true, or throws why not. */
async function jsSdkVerify(json, which, proofType = sdk.ProofType.BJJSignature) {
  const credential = sdk.W3CCredential.fromJSON(json);
  const proofOk = await credential.verifyProof(proofType, RESOLVER, {
    credStatusResolverRegistry: registries[which],
    merklizeOptions: { documentLoader },
  });
  if (proofOk !== true) throw new Error('verifyProof answered false');
  const status = await wallets[which].getRevocationStatusFromCredential(credential);
  if (!sdk.validateTreeState(status.issuer)) throw new Error('credential status: invalid tree state of the issuer');
  const nonce = BigInt(credential.credentialStatus.revocationNonce ?? 0);
  if (!(await verifyProof(Hash.fromHex(status.issuer.revocationTreeRoot), status.mtp, nonce, 0n))) {
    throw new Error(`credential status: proof validation failed, revNonce=${nonce}`);
  }
  if (status.mtp.existence) throw new Error('credential status: revoked');
  return true;
}

const cpuMs = (u) => (u.user + u.system) / 1000;

process.on('message', async (m) => {
  try {
    if (m.op === 'verify') {
      pristine();
      const u0 = process.cpuUsage();
      const t0 = performance.now();
      let ok = false;
      let error;
      try {
        answerPublished = m.published === true;
        ok = await jsSdkVerify(m.credential, m.statuses === 'revoking' ? 'revoking' : 'demo', m.proofType);
      } catch (e) {
        error = String(e?.message ?? e).slice(0, 300);
      }
      const used = process.cpuUsage(u0);
      process.send({ id: m.id, ok, error, cpuMs: cpuMs(used), wallMs: performance.now() - t0, poseidonReplaced: replaced });
    } else if (m.op === 'revoke') {
      await revoking.revoke(BigInt(m.nonce));
      process.send({ id: m.id, ok: true });
    } else if (m.op === 'status') {
      pristine();
      const u0 = process.cpuUsage();
      await demo.status(BigInt(m.nonce));
      process.send({ id: m.id, ok: true, cpuMs: cpuMs(process.cpuUsage(u0)) });
    } else if (m.op === 'exit') {
      process.disconnect();
    }
  } catch (e) {
    process.send({ id: m.id, ok: false, error: String(e?.stack ?? e) });
  }
});
process.send({ ready: true });
