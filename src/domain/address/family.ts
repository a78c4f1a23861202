export type AddressNamespace = 'eip155' | 'tezos' | 'aptos' | 'polkadot' | 'starknet' | 'cosmos' | 'cardano';

/** `'shape'`: not even one of the family. */
export type AddressCheck = (address: string) => string | undefined;

export interface AddressFamily {
  namespace: AddressNamespace;
  description: string;
  check: AddressCheck;
}

export const SHAPE = 'shape';
