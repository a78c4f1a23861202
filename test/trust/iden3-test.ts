/** Narrow typed access to @iden3/js-iden3-core and js-sdk for the tests (see src/trust/iden3.ts for why). */
import * as sdkNs from '@0xpolygonid/js-sdk';
import * as coreNs from '@iden3/js-iden3-core';

interface TestClaim {
  hiHv(): { hi: bigint; hv: bigint };
  hex(): string;
}
const core = coreNs as unknown as { Claim: new () => { fromHex(hex: string): TestClaim } };

export const Claim = { fromHex: (hex: string): TestClaim => new core.Claim().fromHex(hex) };

interface IdT {
  bigInt(): bigint;
}
const c2 = coreNs as unknown as {
  buildDIDType(method: string, blockchain: string, network: string): Uint8Array;
  genesisFromEthAddress(addr: Uint8Array): Uint8Array;
  Id: new (type: Uint8Array, genesis: Uint8Array) => IdT;
  DID: { parseFromId(id: IdT): { string(): string } };
  DidMethod: { Iden3: string; PolygonId: string };
  Blockchain: { Polygon: string };
  NetworkId: { Amoy: string; Main: string };
};

/**
 * An iden3 DID whose identifier is made from an Ethereum address: did:iden3:polygon:amoy or did:polygonid:polygon:main
 * by default, or on the network given.
 */
export function iden3DidFromEthAddress(address: string, method: 'iden3' | 'polygonid' = 'iden3', network?: { blockchain: string; networkId: string }): string {
  const hex = address.replace(/^0x/, '');
  const bytes = new Uint8Array(20);
  for (let i = 0; i < 20; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  const type = c2.buildDIDType(
    method === 'iden3' ? c2.DidMethod.Iden3 : c2.DidMethod.PolygonId,
    network?.blockchain ?? c2.Blockchain.Polygon,
    network?.networkId ?? (method === 'iden3' ? c2.NetworkId.Amoy : c2.NetworkId.Main),
  );
  return c2.DID.parseFromId(new c2.Id(type, c2.genesisFromEthAddress(bytes))).string();
}

interface W3C {
  toCoreClaim(opts: Record<string, unknown>): Promise<{ hex(): string }>;
  verifyProof(proofType: string, resolverUrl: string, opts?: Record<string, unknown>): Promise<boolean>;
}
/** js-sdk's W3CCredential, for comparing with its own computations. */
export const W3CCredential = (sdkNs as unknown as { W3CCredential: { fromJSON(obj: unknown): W3C } }).W3CCredential;

const c3 = coreNs as unknown as { chainIDfromDID(did: unknown): number; DID: { parse(s: string): unknown } };
/** The chain id of a DID's network, from @iden3/js-iden3-core's registry. Throws for a network it does not know. */
export const chainIdOfDid = (did: string): number => c3.chainIDfromDID(c3.DID.parse(did));
