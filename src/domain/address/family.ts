export type AddressNamespace = 'eip155' | 'tezos' | 'aptos' | 'polkadot' | 'starknet' | 'cosmos' | 'cardano';

/** undefined when the address fits, else why; `'shape'` (not even one of the family) adds nothing to the message. */
export type AddressCheck = (address: string) => string | undefined;

export interface AddressFamily {
  namespace: AddressNamespace;
  description: string;
  check: AddressCheck;
}

export const SHAPE = 'shape';
