/** What every address family module provides to the dispatcher in ../address.ts. */

export type AddressNamespace = 'eip155' | 'tezos' | 'aptos' | 'polkadot' | 'starknet' | 'cosmos' | 'cardano';

/**
 * One family's validity check: undefined when the address fits, else the reason it does not. The reason `'shape'`
 * means "does not even look like one" and adds nothing to the message; any other reason is appended to it.
 */
export type AddressCheck = (address: string) => string | undefined;

export interface AddressFamily {
  namespace: AddressNamespace;
  /** What an address of the family looks like, for the message when an address does not fit. */
  description: string;
  check: AddressCheck;
}

/** The reason a check gives when the address does not look like one of its family at all. */
export const SHAPE = 'shape';
