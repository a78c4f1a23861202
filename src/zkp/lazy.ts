/** js-iden3-auth costs ~26 MB of RSS: never import it statically. */
import type { buildAuthorizationRequest } from './request.js';
import type { createRpcStateResolvers } from './rpc-state.js';
import type { createZkpVerifier } from './verify.js';

export interface Iden3Auth {
  buildAuthorizationRequest: typeof buildAuthorizationRequest;
  createZkpVerifier: typeof createZkpVerifier;
  createRpcStateResolvers: typeof createRpcStateResolvers;
}

let loading: Promise<Iden3Auth> | undefined;

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
