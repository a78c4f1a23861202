/**
 * The verifier library's console stays out of the service's output (which is pino's). A proof point off the curve
 * makes the Groth16 check throw "bad point: equation left != right" (@noble/curves, under js-jwz's
 * verifyGroth16Proof), and js-sdk's NativeProver.verify, which js-iden3-auth calls for each query proof,
 * console.logs what it catches: a stack trace per bad proof. src/zkp/groth16.ts replaces that prover, and js-jwz's
 * auth proving methods, with the same check on the Groth16 worker thread, where a check that throws is a proof that
 * does not verify, silently. What the worker thread prints reaches this process's stdout, so that is watched too.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyGroth16Proof } from '@iden3/js-jwz';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createZkpVerifier, defaultCircuitsDir, type ZkpVerifier } from '../../src/zkp/index.js';
import { cloneProof, haveMtpVector, iden3DocumentLoader, plainResponse, type FixtureProof, verifierSettings } from './fixtures.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { buildPending, forgeJwz, rejection, steeredResolvers, WIDE } from './library.js';

const present = haveMtpVector() && haveIden3Documents();

let verifier: ZkpVerifier;
beforeAll(async () => {
  verifier = await createZkpVerifier({ ...verifierSettings, documentLoader: iden3DocumentLoader(), stateResolvers: steeredResolvers().resolvers, proofMaxAgeMs: WIDE, allowPlainMessages: true });
});

/** The vector's proof with its pi_a moved off the curve. */
function offCurve(proof: FixtureProof['proof']): FixtureProof['proof'] {
  const moved = structuredClone(proof);
  moved.pi_a[0] = (BigInt(moved.pi_a[0]!) + 1n).toString();
  return moved;
}

/** Runs `run` and answers its result and every line written meanwhile to the console, stdout or stderr. */
async function watched<T>(run: () => Promise<T>): Promise<{ result: T; written: string[] }> {
  const written: string[] = [];
  const write = (stream: string) => (chunk: unknown) => { written.push(`${stream}: ${String(chunk)}`); return true; };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(write('stdout')),
    vi.spyOn(process.stderr, 'write').mockImplementation(write('stderr')),
    ...(['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => { written.push(`console.${m}: ${args.map(String).join(' ')}`); })),
  ];
  try {
    const result = await run();
    // The worker thread's output comes through a message port, after the task's answer.
    await sleep(500);
    return { result, written };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

describe.skipIf(!present)('a proof point off the curve', () => {
  it('makes the library throw "bad point" (what this file is about)', () => {
    const vk = JSON.parse(readFileSync(path.join(defaultCircuitsDir(), 'credentialAtomicQueryMTPV2', 'verification_key.json'), 'utf8')) as Parameters<typeof verifyGroth16Proof>[1];
    const proof = cloneProof();
    expect(verifyGroth16Proof(proof, vk)).toBe(true);
    expect(() => verifyGroth16Proof({ ...proof, proof: offCurve(proof.proof) }, vk)).toThrow(/bad point/);
  });

  it('in a query proof: not-valid, and nothing printed', async () => {
    const proof = cloneProof();
    proof.proof = offCurve(proof.proof);
    const { result, written } = await watched(() => verifier.verify(plainResponse({ proof }), buildPending()));
    expect(result.verdicts[0]).toMatchObject({ status: 'not-valid', is_valid: false });
    expect(written).toEqual([]);
  });

  it('in the auth proof of a JWZ: 422, and nothing printed', async () => {
    const [header, payload, signature] = (await forgeJwz()).split('.') as [string, string, string];
    const zkp = JSON.parse(Buffer.from(signature, 'base64url').toString()) as { proof: FixtureProof['proof'] };
    zkp.proof = offCurve(zkp.proof);
    const token = `${header}.${payload}.${Buffer.from(JSON.stringify(zkp)).toString('base64url')}`;
    const { result, written } = await watched(() => rejection(verifier.verify(token, buildPending())));
    expect(result).toMatchObject({ statusCode: 422, message: "the JWZ token does not verify: the token's zero-knowledge proof does not verify" });
    expect(written).toEqual([]);
  });
});
