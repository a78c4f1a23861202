/**
 * js-iden3-auth checks each proof synchronously (BN254 pairings on the calling thread). A check that could not run
 * throws ProofCheckUnavailableError: "error", not "not-valid".
 */
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import { compiledWorker, pinNiceAddon, webWorkerData } from '../worker-file.js';
import { isRecord } from '../schemas/json.js';
import type { Groth16Task } from './groth16-worker.js';

let pool: Piscina | undefined;
/** It exits when idle, so it never holds the process up. */
function threads(): Piscina {
  if (pool !== undefined) return pool;
  pinNiceAddon();
  const worker = compiledWorker(import.meta.url, 'zkp/groth16-worker.js');
  pool = new Piscina({
    filename: worker.filename,
    minThreads: 0,
    maxThreads: 1,
    idleTimeout: 30_000,
    niceIncrement: 10,
    workerData: { entry: worker.entry, ...webWorkerData('groth16-verification') },
  });
  return pool;
}

export function groth16Checks(): number {
  return pool?.completed ?? 0;
}

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

/** js-iden3-core's fromBigEndian reverses its argument in place. */
const bigEndian = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));

const AUTH_CIRCUITS = ['auth', 'authV2', 'authV3', 'authV3-8-32'];
let installing: Promise<void> | undefined;

/** Wraps js-jwz's proving methods (the CommonJS copy js-iden3-auth loads), keeping their challenge check. */
function installJwz(): Promise<void> {
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
        // Not this message's proof: js-jwz's own method refuses it with its own error, before any pairing.
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

export async function offloadGroth16(verifier: object): Promise<void> {
  await installJwz();
  const storage: unknown = Reflect.get(verifier, 'circuitStorage');
  if (!isCircuitStorage(storage)) throw new Error('the verifier has no circuit storage: @iden3/js-iden3-auth changed');
  const decoder = new TextDecoder();
  Reflect.set(verifier, 'prover', {
    // js-sdk's NativeProver.verify answers false for any failure and logs; a check that cannot run is undecided here.
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
