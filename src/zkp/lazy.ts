/**
 * The OffChainZKP code that needs @iden3/js-iden3-auth, loaded on demand. That library is CommonJS and brings its
 * own copies of @0xpolygonid/js-sdk and @iden3/js-crypto, snarkjs and ethers: ~26 MB of RSS that a service running no
 * OffChainZKP scenario never needs. So request.ts, verify.ts and rpc-state.ts are reached only through this import(),
 * by OffChainZkp.ready() (execution/offchain-zkp.ts) at start where ZKP_VERIFIER_DID is set (else never: every OffChainZKP execute then answers
 * error, and no wallet answer is awaited); every other module of src/zkp (configuration, DID syntax, query
 * checks, the create-time schema check) leaves it unloaded. Import those three (or index.ts, which re-exports them)
 * statically from the app and the memory is back at start: test/zkp/lazy-load.test.ts watches for it.
 */
import type { buildAuthorizationRequest } from './request.js';
import type { createRpcStateResolvers } from './rpc-state.js';
import type { createZkpVerifier } from './verify.js';

export interface Iden3Auth {
  buildAuthorizationRequest: typeof buildAuthorizationRequest;
  createZkpVerifier: typeof createZkpVerifier;
  createRpcStateResolvers: typeof createRpcStateResolvers;
}

let loading: Promise<Iden3Auth> | undefined;

/** The modules, imported once; a failed import is tried again at the next call. */
export function loadIden3Auth(): Promise<Iden3Auth> {
  loading ??= Promise.all([import('./request.js'), import('./verify.js'), import('./rpc-state.js')]).then(
    ([request, verify, rpcState]) => ({
      buildAuthorizationRequest: request.buildAuthorizationRequest,
      createZkpVerifier: verify.createZkpVerifier,
      createRpcStateResolvers: rpcState.createRpcStateResolvers,
    }),
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}
