/**
 * The iden3 on-chain verification stack of @iden3/contracts 3.4.0 on a local EVM, from the package's own build
 * artifacts: the State contract, the credential validators CredentialAtomicQuerySigV2Validator and
 * CredentialAtomicQueryV3Validator (and on demand LinkedMultiQueryValidator and CredentialAtomicQueryV3StableValidator),
 * and the UniversalVerifier (each behind an EIP-1167 proxy, since their constructors disable initializers). One part
 * is a stand-in: the Groth16 verifier behind the validators accepts every proof, because no proving keys can be had
 * offline; everything else (the validators' checks of the public signals against
 * the request's params, the query hash, the challenge bound to the sender, the issuer's state and the GIST root in the
 * State contract, the verifier's request ids and proof records) is the real code.
 *
 * Used by `npm run demo:onchain` (scripts/demo-onchain.mjs) and the chain tests.
 */
import { createRequire } from 'node:module';
import * as jsSdk from '@0xpolygonid/js-sdk';
import { Id, SchemaHash } from '@iden3/js-iden3-core';
import { Path } from '@iden3/js-jsonld-merklization';
import {
  createPublicClient, createWalletClient, custom, encodeAbiParameters, encodePacked, keccak256, zeroAddress,
} from 'viem';

const require = createRequire(import.meta.url);
const artifact = (name) => require(`@iden3/contracts/build/contracts/${name}.json`);

/** The circuits the stable V3 validator is deployed for: the stable one and the subversion wallets prove with. */
const STABLE_V3_CIRCUITS = ['credentialAtomicQueryV3OnChain', 'credentialAtomicQueryV3OnChain-16-16-64-16-32'];
/** The Groth16 verifier stand-in: runtime code that answers 32 bytes of 1 (true) to every call. */
const ACCEPT_ALL = '0x600a600c600039600a6000f3600160005260206000f3';
/** The id type the State contract is set up with (its default); any two bytes it supports would do. */
export const ID_TYPE = '0x0212';

/** Values of iden3's own deployment scripts: KYCAgeCredential (kyc-v3 context), its `birthday` path, operator codes. */
export const KYC_AGE = {
  context: 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld',
  type: 'KYCAgeCredential',
  schema: 74977327600848231385663280181476307657n,
  birthdayPathKey: 20376033832371109177683048456014525905119173674985843915445634726167450989630n,
};
export const OPERATORS = { $noop: 0n, $eq: 1n, $lt: 2n, $gt: 3n, $in: 4n, $nin: 5n, $ne: 6n, $lte: 7n, $gte: 8n };

const V2_QUERY = [{
  type: 'tuple',
  components: [
    { name: 'schema', type: 'uint256' }, { name: 'claimPathKey', type: 'uint256' }, { name: 'operator', type: 'uint256' },
    { name: 'slotIndex', type: 'uint256' }, { name: 'value', type: 'uint256[]' }, { name: 'queryHash', type: 'uint256' },
    { name: 'allowedIssuers', type: 'uint256[]' }, { name: 'circuitIds', type: 'string[]' },
    { name: 'skipClaimRevocationCheck', type: 'bool' }, { name: 'claimPathNotExists', type: 'uint256' },
  ],
}];
const V3_QUERY = [{
  type: 'tuple',
  components: [
    ...V2_QUERY[0].components.slice(0, 9),
    { name: 'groupID', type: 'uint256' }, { name: 'nullifierSessionID', type: 'uint256' },
    { name: 'proofType', type: 'uint256' }, { name: 'verifierID', type: 'uint256' },
  ],
}];
const LINKED_QUERY = [{
  type: 'tuple',
  components: [
    { name: 'claimPathKey', type: 'uint256[]' }, { name: 'operator', type: 'uint256[]' }, { name: 'slotIndex', type: 'uint256[]' },
    { name: 'value', type: 'uint256[][]' }, { name: 'queryHash', type: 'uint256[]' }, { name: 'circuitIds', type: 'string[]' },
    { name: 'groupID', type: 'uint256' }, { name: 'verifierID', type: 'uint256' },
  ],
}];
const PROOF = [{ type: 'uint256[]' }, { type: 'uint256[2]' }, { type: 'uint256[2][2]' }, { type: 'uint256[2]' }];

const padded = (values) => [...values, ...new Array(Math.max(0, 64 - values.length)).fill(0n)];

/**
 * The circuit query of a condition on a credential type, as js-sdk computes it from the type's JSON-LD context: the
 * schema hash of the type's IRI, the attribute's claimPathKey and slot, the operator code and the values. `document`
 * is the context itself (read offline; it must not need other documents).
 */
export async function circuitQuery({ url, document, type }, attribute, operator, value) {
  const documentLoader = async (u) => {
    if (u !== url) throw new Error(`no JSON-LD document ${u} offline`);
    return { contextUrl: null, documentUrl: u, document };
  };
  const ld = JSON.stringify(document);
  const typeId = await Path.getTypeIDFromContext(ld, type, { documentLoader });
  const schema = jsSdk.calculateCoreSchemaHash(new TextEncoder().encode(typeId)).bigInt();
  const meta = await jsSdk.parseQueryMetadata({ fieldName: attribute, operator: Number(operator), operatorValue: value }, ld, type, { documentLoader });
  return { schema, claimPathKey: meta.claimPathKey, slotIndex: BigInt(meta.slotIndex), operator, values: meta.values };
}

/** js-sdk's query hash of the V2 circuits (what a wallet proves). */
export function queryHashV2(q) {
  return jsSdk.calculateQueryHashV2(padded(q.values), SchemaHash.newSchemaHashFromInt(q.schema), q.slotIndex ?? 0n, q.operator, q.claimPathKey, q.claimPathNotExists ?? 0n);
}

/** js-sdk's query hash of the V3 circuits. */
export function queryHashV3(q) {
  return jsSdk.calculateQueryHashV3(
    padded(q.values), SchemaHash.newSchemaHashFromInt(q.schema), q.slotIndex ?? 0n, q.operator, q.claimPathKey, q.values.length,
    q.claimPathKey === 0n ? 0 : 1, q.skipClaimRevocationCheck ? 0 : 1, 0n, q.nullifierSessionID ?? 0n,
  );
}

/**
 * The params of CredentialAtomicQuerySigV2Validator; `queryHash` defaults to the hash of the fields, allowedIssuers
 * to [] (any issuer), skipClaimRevocationCheck to false.
 */
export function sigV2Params(q) {
  return encodeAbiParameters(V2_QUERY, [{
    schema: q.schema, claimPathKey: q.claimPathKey, operator: q.operator, slotIndex: q.slotIndex ?? 0n, value: padded(q.values),
    queryHash: q.queryHash ?? queryHashV2(q), allowedIssuers: q.allowedIssuers ?? [], circuitIds: ['credentialAtomicQuerySigV2OnChain'],
    skipClaimRevocationCheck: q.skipClaimRevocationCheck ?? false, claimPathNotExists: q.claimPathNotExists ?? 0n,
  }]);
}

/**
 * The params of CredentialAtomicQueryV3Validator (beta.1); `queryHash` defaults to the hash of the fields, the V2
 * fields as sigV2Params, groupID, nullifierSessionID and proofType to 0 (none, none, either). The stable validator
 * (CredentialAtomicQueryV3StableValidator) reads the same params: `circuitIds` ['credentialAtomicQueryV3OnChain'].
 */
export function v3Params(q) {
  return encodeAbiParameters(V3_QUERY, [{
    schema: q.schema, claimPathKey: q.claimPathKey, operator: q.operator, slotIndex: q.slotIndex ?? 0n, value: q.values,
    queryHash: q.queryHash ?? queryHashV3(q), allowedIssuers: q.allowedIssuers ?? [], circuitIds: q.circuitIds ?? ['credentialAtomicQueryV3OnChain-beta.1'],
    skipClaimRevocationCheck: q.skipClaimRevocationCheck ?? false, groupID: q.groupID ?? 0n, nullifierSessionID: q.nullifierSessionID ?? 0n,
    proofType: q.proofType ?? 0n, verifierID: 0n,
  }]);
}

/** js-sdk's query hash of one linkedMultiQuery condition: V3's, with no revocation flag, verifier or nullifier session. */
export const queryHashLinked = (q) => queryHashV3({ ...q, skipClaimRevocationCheck: true, nullifierSessionID: 0n });

/**
 * The params of LinkedMultiQueryValidator: conditions on the credential of the V3 request of group `groupID` (each
 * condition's `queryHash` defaults to queryHashLinked's).
 */
export function linkedParams(conditions, groupID) {
  return encodeAbiParameters(LINKED_QUERY, [{
    claimPathKey: conditions.map((q) => q.claimPathKey), operator: conditions.map((q) => q.operator),
    slotIndex: conditions.map((q) => q.slotIndex ?? 0n), value: conditions.map((q) => q.values),
    queryHash: conditions.map((q) => q.queryHash ?? queryHashLinked(q)), circuitIds: ['linkedMultiQuery10-beta.1'], groupID, verifierID: 0n,
  }]);
}

/** A type-1 request id as the contract (and js-sdk) derive it: 0x0001 prefix + keccak256(params, creator) cut to 192 bits. */
export function typeOneRequestId(params, creator) {
  const hash = BigInt(keccak256(encodePacked(['bytes', 'address'], [params, creator])));
  return (hash & ((1n << 192n) - 1n)) + (1n << 240n);
}

/** The genesis identity of `state` (GenesisUtils.calcIdFromGenesisState), as a uint256. */
const genesisId = (state) => Id.idGenesisFromIdenState(Uint8Array.from([0x02, 0x12]), state).bigInt();
/** The challenge a proof for `address` carries: its bytes read little-endian (what the validators check). */
const challengeOf = (address) => BigInt(`0x${Buffer.from(address.slice(2), 'hex').reverse().toString('hex')}`);

function link(a, libraries) {
  let code = a.bytecode.slice(2);
  for (const refs of Object.values(a.linkReferences ?? {})) {
    for (const [name, places] of Object.entries(refs)) {
      const address = libraries[name];
      if (address === undefined) throw new Error(`no address for library ${name}`);
      for (const { start, length } of places) code = code.slice(0, start * 2) + address.slice(2).toLowerCase() + code.slice((start + length) * 2);
    }
  }
  return `0x${code}`;
}

/**
 * Deploys the stack through an EIP-1193 provider (Hardhat's), the first account as owner. Answers the addresses and
 * helpers to register requests and submit responses.
 */
export async function deployIden3Stack(provider) {
  const transport = custom(provider);
  const client = createPublicClient({ transport });
  const accounts = await provider.request({ method: 'eth_accounts' });
  const owner = accounts[0];
  const wallet = createWalletClient({ transport, account: owner });
  const mined = async (hash) => {
    const r = await client.waitForTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return r;
  };
  const deployCode = async (bytecode, abi = []) => (await mined(await wallet.deployContract({ abi, bytecode, chain: null }))).contractAddress;
  const deploy = (name, libraries = {}) => deployCode(link(artifact(name), libraries), artifact(name).abi);
  /** An EIP-1167 proxy of `implementation`, with its own storage (the validators' constructors disable initializers). */
  const proxyOf = (implementation) =>
    deployCode(`0x3d602d80600a3d3981f3363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91602b57fd5bf3`);
  const write = async (address, name, functionName, args, from = owner) =>
    mined(await wallet.writeContract({ address, abi: artifact(name).abi, functionName, args, account: from, chain: null }));

  const groth16 = await deployCode(ACCEPT_ALL);
  const poseidon = {
    PoseidonUnit1L: await deploy('PoseidonUnit1L'), PoseidonUnit2L: await deploy('PoseidonUnit2L'), PoseidonUnit3L: await deploy('PoseidonUnit3L'),
  };
  const SmtLib = await deploy('SmtLib', poseidon);
  const StateLib = await deploy('StateLib');
  const state = await proxyOf(await deploy('State', { ...poseidon, SmtLib, StateLib }));
  await write(state, 'State', 'initialize', [groth16, ID_TYPE, owner, zeroAddress]);

  const sigV2Validator = await proxyOf(await deploy('CredentialAtomicQuerySigV2Validator'));
  await write(sigV2Validator, 'CredentialAtomicQuerySigV2Validator', 'initialize', [state, groth16, owner]);
  const v3Validator = await proxyOf(await deploy('CredentialAtomicQueryV3Validator'));
  await write(v3Validator, 'CredentialAtomicQueryV3Validator', 'initialize', [state, groth16, owner]);

  const VerifierLib = await deploy('VerifierLib');
  const verifier = await proxyOf(await deploy('UniversalVerifier', { VerifierLib }));
  await write(verifier, 'UniversalVerifier', 'initialize', [state, owner]);
  for (const v of [sigV2Validator, v3Validator]) await write(verifier, 'UniversalVerifier', 'addValidatorToWhitelist', [v]);
  // The proofs carry their own authentication (the user's id and the challenge bound to the sender).
  await write(verifier, 'UniversalVerifier', 'setAuthMethod', [{ authMethod: 'embeddedAuth', validator: zeroAddress, params: '0x' }]);

  const issuerState = 0x1234567890abcdefn;
  const issuerID = genesisId(issuerState);

  return {
    client, accounts, owner, state, verifier, sigV2Validator, v3Validator, groth16, issuerID,
    blockNumber: () => client.getBlockNumber({ cacheTime: 0 }),
    /** Deploys a LinkedMultiQueryValidator (on demand: the demo's addresses stay those of its docs) and whitelists it. */
    async deployLinkedValidator() {
      const linked = await proxyOf(await deploy('LinkedMultiQueryValidator'));
      await write(linked, 'LinkedMultiQueryValidator', 'initialize', [groth16, owner]);
      await write(verifier, 'UniversalVerifier', 'addValidatorToWhitelist', [linked]);
      return linked;
    },
    /**
     * Deploys the stable V3 validator (CredentialAtomicQueryV3StableValidator, what current deployments use) for the
     * stable circuit and its subversion, and whitelists it; on demand like deployLinkedValidator.
     */
    async deployStableV3Validator() {
      const stable = await proxyOf(await deploy('CredentialAtomicQueryV3StableValidator'));
      await write(stable, 'CredentialAtomicQueryV3StableValidator', 'initialize', [state, [groth16, groth16], STABLE_V3_CIRCUITS, owner]);
      await write(verifier, 'UniversalVerifier', 'addValidatorToWhitelist', [stable]);
      return stable;
    },
    /** Lets the verifier take requests of another validator (e.g. a custom one). */
    whitelist: (validator) => write(verifier, 'UniversalVerifier', 'addValidatorToWhitelist', [validator]),
    /** Registers a multi-request of existing requests (owner as creator); answers its id, keccak256 as the contract wants. */
    async setMultiRequest(requestIds, groupIds = []) {
      const multiRequestId = BigInt(keccak256(encodePacked(['uint256[]', 'uint256[]', 'address'], [requestIds, groupIds, owner])));
      await write(verifier, 'UniversalVerifier', 'setMultiRequest', [{ multiRequestId, requestIds, groupIds, metadata: '0x' }]);
      return multiRequestId;
    },
    /** Registers a request on the UniversalVerifier (owner as creator). */
    async setRequest(requestId, validator, params, metadata = '') {
      return write(verifier, 'UniversalVerifier', 'setRequests', [[{ requestId, metadata, validator, params, creator: owner }]]);
    },
    /** Registers requests in one transaction (a group of linked requests must come at once, at least two). */
    async setRequests(requests) {
      return write(verifier, 'UniversalVerifier', 'setRequests', [requests.map((r) => ({ metadata: '', creator: owner, ...r }))]);
    },
    /**
     * Submits `sender`'s response to a request: public signals a wallet's proof of the request's query would carry
     * (query hash, the sender's challenge, the issuer's genesis state, GIST root 0 of the fresh State contract).
     * `kind` 'custom': an empty proof, for a validator that reads none. `revocationChecked` false: a V2 proof made
     * without the revocation check (what a request with skipClaimRevocationCheck takes). `circuitId`: the circuit
     * the proof names in the response's metadata (the stable V3 validator picks its Groth16 verifier by it).
     * `linkID`: a grouped V3 proof's, shared with the `kind` 'linked' proof of its group (its `queryHashes`).
     */
    async submit(sender, requestId, { kind, queryHash, revocationChecked = true, circuitId, linkID = 0n, queryHashes = [] }) {
      if (kind === 'custom') {
        return write(verifier, 'UniversalVerifier', 'submitResponse', [
          { authMethod: 'embeddedAuth', proof: '0x' }, [{ requestId, proof: '0x', metadata: '0x' }], '0x',
        ], sender);
      }
      const { timestamp } = await client.getBlock();
      const userID = genesisId(BigInt(sender) + 1n);
      const inputs = kind === 'v2'
        ? [1n, userID, queryHash, issuerState, requestId, challengeOf(sender), 0n, issuerID, revocationChecked ? 1n : 0n, issuerState, timestamp]
        : kind === 'linked'
          // linkedMultiQuery10: linkID, merklized, 10 operator outputs, 10 query hashes (the unused ones 0).
          ? [linkID, 1n, ...new Array(10).fill(0n), ...queryHashes, ...new Array(10 - queryHashes.length).fill(0n)]
          : [userID, queryHash, issuerState, linkID, 0n, 0n, 1n, requestId, challengeOf(sender), 0n, issuerID, issuerState, timestamp, 1n];
      const proof = encodeAbiParameters(PROOF, [inputs, [0n, 0n], [[0n, 0n], [0n, 0n]], [0n, 0n]]);
      const metadata = circuitId === undefined ? '0x' : encodeAbiParameters([{ type: 'string' }], [circuitId]);
      return write(verifier, 'UniversalVerifier', 'submitResponse', [
        { authMethod: 'embeddedAuth', proof: '0x' }, [{ requestId, proof, metadata }], '0x',
      ], sender);
    },
  };
}
