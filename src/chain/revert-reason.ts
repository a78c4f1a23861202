/** Loads viem: the follower imports it dynamically, and only for a reverted transaction. */
import { decodeErrorResult, type Hex } from 'viem';
import { verifierErrorsAbi } from './abi.js';
import { clip } from './rpc-errors.js';

/** Each argument clipped: a contract's error may carry any length of text (the whole is clipped to 4,096 as well). */
function shown(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  return clip(typeof v === 'string' ? v : JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)), 1000);
}

/** Error(string), Panic(uint256) or a UniversalVerifier custom error in words; else the selector. */
export function revertReason(data: Hex): string {
  return clip(reason(data), 4096);
}

function reason(data: Hex): string {
  if (data === '0x') return 'reverted without a reason';
  try {
    const e = decodeErrorResult({ abi: verifierErrorsAbi, data });
    if (e.errorName === 'Error') return `reverted: ${shown(e.args?.[0])}`;
    if (e.errorName === 'Panic') return `reverted with panic ${shown(e.args?.[0])}`;
    return `reverted: ${e.errorName}(${(e.args ?? []).map(shown).join(', ')})`;
  } catch {
    return `reverted with error ${data.slice(0, 10)} (not one of the UniversalVerifier's)`;
  }
}
