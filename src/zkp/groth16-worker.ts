/**
 * The worker thread of the Groth16 pool (groth16.ts, piscina): one proof check, `verifyGroth16Proof` of
 * @iden3/js-jwz (the function @iden3/js-iden3-auth verifies every proof with), off the request thread. A thrown error
 * (a signal out of the field, a wrong signal count) reaches the caller with its message.
 */
import { verifyGroth16Proof } from '@iden3/js-jwz';

export interface Groth16Task {
  proof: Parameters<typeof verifyGroth16Proof>[0];
  /** The verification key, as its JSON text. */
  vk: string;
}

export default function check(task: Groth16Task): boolean {
  return verifyGroth16Proof(task.proof, JSON.parse(task.vk));
}
