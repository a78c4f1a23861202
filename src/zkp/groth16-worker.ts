/** A key that is not JSON is the deployment's fault: it throws. */
import { verifyGroth16Proof } from '@iden3/js-jwz';

export interface Groth16Task {
  proof: Parameters<typeof verifyGroth16Proof>[0];
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
