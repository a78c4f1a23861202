/**
 * The worker thread of the Groth16 pool (groth16.ts, piscina): one proof check, `verifyGroth16Proof` of
 * @iden3/js-jwz (the function @iden3/js-iden3-auth verifies every proof with), off the request thread.
 * A proof the check cannot even evaluate (a point off the curve, a signal outside the field, a wrong signal count:
 * the check throws) does not verify: false, as js-sdk's NativeProver answers for any failure. A verification key that
 * is not JSON is the deployment's fault, not the proof's: that throws, and reaches the caller as a failed check.
 */
import { verifyGroth16Proof } from '@iden3/js-jwz';

export interface Groth16Task {
  proof: Parameters<typeof verifyGroth16Proof>[0];
  /** The verification key, as its JSON text. */
  vk: string;
}

export default function check(task: Groth16Task): boolean {
  const vk: Parameters<typeof verifyGroth16Proof>[1] = JSON.parse(task.vk);
  try {
    return verifyGroth16Proof(task.proof, vk);
  } catch {
    return false;
  }
}
