/** scripts/iden3-stack.mjs as the deploy tests use it, typed, and the IDInformation context its queries read. */
import fs from 'node:fs';
import path from 'node:path';
import type { Address, EIP1193Provider, Hex } from 'viem';
import { ID_INFORMATION_CONTEXT_URL } from '../../src/jsonld/urls.js';
// @ts-expect-error: a JavaScript module without declarations (it is also the demo's)
import * as stackModule from '../../scripts/iden3-stack.mjs';

export interface Query { schema: bigint; claimPathKey: bigint; operator: bigint; slotIndex?: bigint; values: bigint[]; circuitIds?: string[]; groupID?: bigint; allowedIssuers?: bigint[] }
export interface Stack {
  accounts: Address[]; owner: Address; verifier: Address; sigV2Validator: Address; v3Validator: Address; issuerID: bigint;
  deployLinkedValidator(): Promise<Address>; deployStableV3Validator(): Promise<Address>;
  setRequests(requests: { requestId: bigint; validator: Address; params: Hex }[]): Promise<{ transactionHash: Hex }>;
  /** `linkID`: a grouped V3 proof's, and its group's linkedMultiQuery proof's (kind 'linked', of `queryHashes`). */
  submit(sender: Address, id: bigint, o: { kind: 'v2' | 'v3' | 'linked'; queryHash?: bigint; circuitId?: string; linkID?: bigint; queryHashes?: bigint[] }): Promise<unknown>;
}
export const stack = stackModule as {
  deployIden3Stack(p: EIP1193Provider): Promise<Stack>;
  sigV2Params(q: Query): Hex; v3Params(q: Query): Hex; linkedParams(conditions: Query[], groupID: bigint): Hex;
  queryHashV2(q: Query): bigint; queryHashV3(q: Query): bigint; queryHashLinked(q: Query): bigint;
  typeOneRequestId(params: Hex, creator: Address): bigint;
  circuitQuery(type: { url: string; document: unknown; type: string }, attribute: string, operator: bigint, value: unknown): Promise<Query>;
  OPERATORS: Record<string, bigint>;
};

const root = path.resolve(import.meta.dirname, '../..');
export const ID_INFORMATION = {
  url: ID_INFORMATION_CONTEXT_URL,
  type: 'IDInformation',
  document: JSON.parse(fs.readFileSync(path.join(root, 'src/jsonld/documents/IDInformation-v1.jsonld.json'), 'utf8')) as unknown,
};
