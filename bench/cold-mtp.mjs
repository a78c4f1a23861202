/**
 * Section 5 of bench/engine.mjs: cold verification of an Iden3SparseMerkleTreeProof-only credential never seen by the
 * verifying process, side by side with js-sdk's W3CCredential.verifyProof for that proof type plus its revocation check
 * (bench/jssdk-verify.mjs, in a child process), on the same credentials.
 *
 * The credentials: ENGINE_COLD_MTP (20) measured + ENGINE_COLD_MTP_WARMUP (10) warm-up ones, IDInformation for ADDRESS,
 * issued now by one demo issuer instance with `proof: 'mtp'` (js-sdk adds each claim to the issuer's claims tree and
 * generates the MTP; each at a state of its own, which the issuer publishes in process). Both sides get the issuer
 * state's publication answered in process (this service: TrustDeps.statePublication; js-sdk: its resolver fetch stub)
 * and the revocation status from a demo issuer instance in process. Cross-checked: both accept every measured one,
 * both refuse a copy with one subject value changed.
 * Goals: <= 25 ms of CPU per credential (median) and >= 8x faster than js-sdk; misses are answered as failures.
 */
import { ADDRESS, DEMO_STATUS_URL, forged, freshIssueRequest } from './fixtures.mjs';
import { fmt, table } from './lib.mjs';

const N = Math.max(1, Math.floor(Number(process.env.ENGINE_COLD_MTP ?? 20)));
const W = Math.max(1, Math.floor(Number(process.env.ENGINE_COLD_MTP_WARMUP ?? 10)));
const GOAL_MS = 25;
const GOAL_RATIO = 8;
const MTP = 'Iden3SparseMerkleTreeProof';

const cpuMsNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

/** Measures; `startJsSdk` is engine.mjs's (the js-sdk child process). Answers the figures, or { error }. */
export async function coldMtp(startJsSdk) {
  try {
    const { createCredentialVerifier } = await import('../dist/trust/index.js');
    const { loadConfig } = await import('../dist/config.js');
    const { createDemoIssuer, demoStatusResolver } = await import('../dist/trust/demo-issuer.js');
    const issuer = await createDemoIssuer({ statusUrl: DEMO_STATUS_URL });
    const now = Date.now();
    const dates = { issuanceDate: now - 3_600_000, expirationDate: now + 365 * 86_400_000 };
    const t0 = performance.now();
    const credentials = [];
    // Indices far from the BJJ section's (its credentials are cached on disk), so that no content repeats.
    for (let i = 0; i < W + N; i++) credentials.push(await issuer.issue({ ...freshIssueRequest(100_000 + i, dates), proof: 'mtp' }));
    const issueMs = performance.now() - t0;
    const base = loadConfig({ CREDENTIAL_VERIFICATION: 'strict', TRUSTED_ISSUERS: issuer.did }).trust;
    const verifier = createCredentialVerifier({ ...base, threads: 0 }, {
      statusResolvers: { SparseMerkleTreeProof: demoStatusResolver(issuer) },
      statePublication: () => ({ isPublished: async (_did, state) => issuer.isPublished(state) }),
    });
    const relevantTypes = new Set(['IDInformation']);
    const ours = async (c) => {
      const c0 = cpuMsNow();
      const [verdict] = await verifier.verify([c], { address: ADDRESS, now: Date.now(), relevantTypes, tenant: 'bench-mtp' });
      return { verdict, cpuMs: cpuMsNow() - c0 };
    };
    const js = startJsSdk();
    try {
      await js.ready;
      const jsVerify = (c) => js.call({ op: 'verify', credential: c, proofType: MTP, published: true });
      for (const c of credentials.slice(0, W)) {
        await ours(c);
        await jsVerify(c);
      }
      const measured = credentials.slice(W);
      const oursR = [];
      for (const c of measured) oursR.push(await ours(c));
      const jsR = [];
      for (const c of measured) jsR.push(await jsVerify(c));
      const forgedOne = forged(measured[0]);
      return { issueMs, n: measured.length, oursR, jsR, forgedOurs: await ours(forgedOne), forgedJs: await jsVerify(forgedOne) };
    } finally {
      js.close();
      await verifier.close?.();
    }
  } catch (error) {
    return { error };
  }
}

/** Prints section 5; answers its failures. */
export function reportColdMtp(r) {
  console.log(`\nCold verification of one Iden3SparseMerkleTreeProof-only credential (demo issuer IDInformation; each never seen by the process that verifies it; ${N} after ${W} warm-up ones; CPU time of the verifying process):\n`);
  if (r.error) {
    console.log(`  not measured: ${r.error.stack ?? r.error}`);
    return ['cold MTP verification not measured'];
  }
  const oursMs = median(r.oursR.map((x) => x.cpuMs));
  const jsMs = median(r.jsR.map((x) => x.cpuMs));
  const ratio = jsMs / oursMs;
  console.log(`  (${r.oursR.length + W} credentials issued with MTPs in ${(r.issueMs / 1000).toFixed(1)} s)\n`);
  console.log(table(['', 'CPU ms, median', 'min', 'max'], [
    ['this service (createCredentialVerifier, threads 0: proof + revocation)', fmt(oursMs, 2), fmt(Math.min(...r.oursR.map((x) => x.cpuMs)), 2), fmt(Math.max(...r.oursR.map((x) => x.cpuMs)), 2)],
    ['js-sdk verifyProof(Iden3SparseMerkleTreeProof) + its revocation check', fmt(jsMs, 2), fmt(Math.min(...r.jsR.map((x) => x.cpuMs)), 2), fmt(Math.max(...r.jsR.map((x) => x.cpuMs)), 2)],
    ['js-sdk / this service', `${fmt(ratio, 1)}x`, '', ''],
  ]));
  const accepted = r.oursR.filter((x) => x.verdict.ok).length;
  const jsAccepted = r.jsR.filter((x) => x.ok).length;
  const crossOk = accepted === r.n && jsAccepted === r.n && !r.forgedOurs.verdict.ok && !r.forgedJs.ok;
  console.log(`\n  ${crossOk ? 'PASS' : 'FAIL'}  cross-check: this service accepts ${accepted}/${r.n}, js-sdk ${jsAccepted}/${r.n}; a changed copy: this service ${r.forgedOurs.verdict.ok ? 'accepts' : 'refuses'}, js-sdk ${r.forgedJs.ok ? 'accepts' : 'refuses'}`);
  if (!crossOk) {
    const bad = r.oursR.find((x) => !x.verdict.ok) ?? {};
    console.log(`        first refusal here: ${bad.verdict?.reason ?? '-'}; js-sdk: ${r.jsR.find((x) => !x.ok)?.error ?? '-'}`);
  }
  console.log(`  ${oursMs <= GOAL_MS ? 'PASS' : 'FAIL'}  cold MTP verification <= ${GOAL_MS} ms of CPU: ${fmt(oursMs, 2)} ms`);
  console.log(`  ${ratio >= GOAL_RATIO ? 'PASS' : 'FAIL'}  >= ${GOAL_RATIO}x faster than js-sdk's verifyProof for that type: ${fmt(ratio, 1)}x`);
  const failures = [];
  if (!crossOk) failures.push('cold MTP verification: this service and js-sdk disagree');
  if (!(oursMs <= GOAL_MS)) failures.push(`cold MTP verification ${fmt(oursMs, 2)} ms of CPU > ${GOAL_MS} ms`);
  if (!(ratio >= GOAL_RATIO)) failures.push(`cold MTP verification only ${fmt(ratio, 1)}x faster than js-sdk (< ${GOAL_RATIO}x)`);
  return failures;
}
