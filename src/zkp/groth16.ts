/**
 * Groth16 proof checks off the request thread. @iden3/js-iden3-auth checks each proof of a wallet's answer
 * synchronously (~50–90 ms of BN254 pairings on the thread that calls it): the JWZ envelope's auth proof through
 * @iden3/js-jwz's proving methods, and each query proof through its prover's `verify`. `offloadGroth16` routes both
 * to a worker thread (piscina) running the same `verifyGroth16Proof`, with the same checks before it. Outcomes: a proof
 * that does not verify, or that the check cannot evaluate (its signals are not the circuit's, a point is off the
 * curve), is false, on both paths (the library then raises its own "not valid" failure); a check that could not run
 * at all (no verification key, the worker thread failed) throws ProofCheckUnavailableError, which the failure table
 * (verify-failures.ts) turns into "error" (undecided) instead of "not-valid".
 */
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import { compiledWorker, pinNiceAddon, webWorkerData } from '../worker-file.js';
import { isRecord } from '../schemas/json.js';
import type { Groth16Task } from './groth16-worker.js';

let pool: Piscina | undefined;
/** One thread per process (checks run one at a time: execution/offchain-zkp.ts); it exits when idle, so it never holds the process up. */
function threads(): Piscina {
  pinNiceAddon();
  pool ??= new Piscina({
    filename: compiledWorker(import.meta.url, 'zkp/groth16-worker.js'),
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 30_000,
    niceIncrement: 10,
    workerData: webWorkerData('groth16-verification'),
  });
  return pool;
}

/** Proof checks the worker thread has finished in this process. */
export function groth16Checks(): number {
  return pool?.completed ?? 0;
}

/** The Groth16 check could not run: nothing was decided about the proof (the failure table: error, not not-valid). */
export class ProofCheckUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProofCheckUnavailableError';
  }
}

export async function verifyOffThread(proof: Groth16Task['proof'], vk: string): Promise<boolean> {
  try {
    const verified: unknown = await threads().run({ proof, vk } satisfies Groth16Task);
    if (typeof verified !== 'boolean') throw new TypeError('the worker thread answered no boolean');
    return verified;
  } catch (e) {
    throw new ProofCheckUnavailableError('the Groth16 check failed to run on its worker thread', { cause: e });
  }
}

interface ProvingMethod {
  readonly methodAlg: { alg: string; circuitId: string; toString(): string };
  unmarshall(signals: string[]): { challenge: bigint };
  verify(messageHash: Uint8Array, proof: Groth16Task['proof'], vk: Uint8Array): Promise<boolean>;
}
interface JwzModule {
  ProvingMethodAlg: new (alg: string, circuitId: string) => ProvingMethod['methodAlg'];
  proving: {
    getProvingMethod(alg: ProvingMethod['methodAlg']): Promise<ProvingMethod>;
    registerProvingMethod(alg: ProvingMethod['methodAlg'], f: () => ProvingMethod): Promise<void>;
  };
}

/** A big-endian byte string as a number (js-iden3-core's fromBigEndian, without reversing its argument in place). */
const bigEndian = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));

/** The auth circuits whose JWZ proofs the library checks (js-jwz registers these). */
const AUTH_CIRCUITS = ['auth', 'authV2', 'authV3', 'authV3-8-32'];
let installing: Promise<void> | undefined;

/**
 * Makes js-jwz's Groth16 proving methods (the CommonJS copy @iden3/js-iden3-auth loads) check proofs off the thread,
 * after the same challenge check, with the same error. Signals the method cannot read as its circuit's outputs (the
 * library would throw whatever js-iden3-core says about them) make a proof that does not verify.
 */
function installJwz(): Promise<void> {
  // Once per process, however many verifiers start at the same time: the methods are wrapped once.
  installing ??= wrapJwzMethods();
  return installing;
}

async function wrapJwzMethods(): Promise<void> {
  const fromAuth = createRequire(createRequire(import.meta.url).resolve('@iden3/js-iden3-auth'));
  const jwz: JwzModule = fromAuth('@iden3/js-jwz');
  const decoder = new TextDecoder();
  for (const circuitId of AUTH_CIRCUITS) {
    const alg = new jwz.ProvingMethodAlg('groth16', circuitId);
    const original = await jwz.proving.getProvingMethod(alg).catch(() => undefined);
    if (!original) continue;
    const base: ProvingMethod = Object.create(original);
    const offloaded: ProvingMethod = Object.assign(base, {
      async verify(messageHash: Uint8Array, proof: Groth16Task['proof'], vk: Uint8Array) {
        let challenge: bigint;
        try {
          challenge = original.unmarshall(proof.pub_signals).challenge;
        } catch {
          return false;
        }
        // Not this message's proof: js-jwz's own method refuses it, with its own error (a row of verify-failures.ts),
        // before any pairing.
        if (challenge !== bigEndian(messageHash)) return original.verify(messageHash, proof, vk);
        return verifyOffThread(proof, decoder.decode(vk));
      },
    });
    await jwz.proving.registerProvingMethod(original.methodAlg, () => offloaded);
  }
}

interface CircuitStorage {
  loadCircuitData(circuitId: string, opts?: { mode: string }): Promise<{ verificationKey?: Uint8Array | null }>;
}
const isCircuitStorage = (x: unknown): x is CircuitStorage => isRecord(x) && typeof x.loadCircuitData === 'function';

/**
 * Routes a js-iden3-auth Verifier's proof checks to the worker thread: its prover's `verify` (query proofs) and the
 * JWZ proving methods (the envelope's auth proof).
 */
export async function offloadGroth16(verifier: object): Promise<void> {
  await installJwz();
  const storage: unknown = Reflect.get(verifier, 'circuitStorage');
  if (!isCircuitStorage(storage)) throw new Error('the verifier has no circuit storage: @iden3/js-iden3-auth changed');
  const decoder = new TextDecoder();
  Reflect.set(verifier, 'prover', {
    // As js-sdk's NativeProver.verify, without its console.log, except that a check that cannot run is not "not
    // verified" (NativeProver answers false for any failure) but undecided.
    async verify(zkp: Groth16Task['proof'] & { circuitId?: string }, circuitId: string): Promise<boolean> {
      let vk: Uint8Array | null | undefined;
      try {
        vk = (await storage.loadCircuitData(circuitId, { mode: 'verification' })).verificationKey;
      } catch (e) {
        throw new ProofCheckUnavailableError(`the verification key of ${circuitId} could not be loaded`, { cause: e });
      }
      if (!vk) throw new ProofCheckUnavailableError(`there is no verification key for ${circuitId}`);
      return verifyOffThread(zkp, decoder.decode(vk));
    },
  });
}
