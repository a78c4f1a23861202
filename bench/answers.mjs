/**
 * `npm run bench:answers`: how many bytes an execute answers and records, and what a page of executions costs, for the
 * worst scenario the service accepts next to a normal one, in the same run (issue 25: a 94-byte execute of 256 rules
 * of 256 `$in` values each answered 2.2 MB, 100 of them grew the database by 348 MiB, and one
 * `GET .../executions?limit=100` answered 335 MB with 10.6 s of CPU).
 *
 * The real server (bench/server.mjs, CREDENTIAL_VERIFICATION=off: sizes, not verification, are measured) on SQLite in a
 * temp DATA_DIR, and on PostgreSQL in a fresh schema when DATABASE_URL is set. Per store:
 *
 *   baseline  the HTTP bench's 5-rule scenario, executed with its 3 credentials.
 *   wide      the issue's scenario (256 rules of 256 `$in` values) when the service accepts it; else (a 400: the rules
 *             cap) the widest it accepts: 256 rules of as many such values as fit in the cap. Executed with no
 *             credential (the issue's 94-byte body) and with 100 credentials of the rules' type, all failing.
 *   heavy     256 rules with 191-character attributes, a name of 256 `"`, executed with 100 credentials whose ids are
 *             ~510 characters: the largest answer the limits allow (compacted to stay within 1 MiB).
 *   listing   BENCH_ANSWERS_EXECUTIONS (100) executes of each of baseline and wide (no credential), then
 *             `GET .../executions?limit=100` of each: bytes, wall time, the server's CPU and RSS; and the database's
 *             growth over those executes.
 *
 * Goals (exit 1 on a miss): every execute answer and audit record within 1 MiB (+ the credentials' digests), every
 * page within 1 MiB + 64 KiB.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ADDRESS, credential, httpScenario, syntheticIdCredentials } from './fixtures.mjs';
import { AUTH, cleanup, createScenario, describeRun, envNumber, fmt, processTreeCpuUs, request, startServer, table, targets, withPg } from './lib.mjs';

const EXECUTIONS = Math.floor(envNumber('BENCH_ANSWERS_EXECUTIONS', 100));
const MIB = 1024 * 1024;
const GOALS = { answer: MIB, record: MIB + 64 * 1024, page: MIB + 64 * 1024 };
const RULES_CAP = 128 * 1024;

const values = (n) => Array.from({ length: n }, (_, i) => `country-${i}`);
const inRules = (n) => Array.from({ length: 256 }, (_, i) => ({ id: `q${i}`, query: { type: 'IDInformation', attribute: 'personalData.citizenship', operator: '$in', value: values(n) } }));
const failing = (n, id = (i) => `urn:uuid:bench-${i}`) =>
  Array.from({ length: n }, (_, i) => ({ ...credential(i + 1, 'IDInformation', { personalData: { citizenship: 'ATL' } }), id: id(i) }));

/** A POST or GET measured: status, bytes of the answer, wall ms, the server's CPU ms, its RSS after (MB). */
async function measured(server, method, url, body) {
  const cpu0 = processTreeCpuUs(server.pid);
  const t0 = performance.now();
  const res = await fetch(server.base + url, { method, headers: AUTH, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - t0;
  return { status: res.status, text, bytes: Buffer.byteLength(text), ms, cpuMs: (processTreeCpuUs(server.pid) - cpu0) / 1000, rssMb: rss(server.pid) };
}

function rss(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Bytes the database takes: the SQLite files, or the executions table in PostgreSQL. */
async function databaseBytes(server) {
  if (server.schema) {
    return withPg(server.target.url, async (c) => Number((await c.query(`SELECT pg_total_relation_size('${server.schema}.executions') AS n`)).rows[0].n));
  }
  return fs.readdirSync(server.dataDir).reduce((sum, f) => sum + fs.statSync(path.join(server.dataDir, f)).size, 0);
}

/** One execute and its audit record: the answer's and the record's bytes. */
async function executeAndRead(server, scenarioId, credentials) {
  const body = { address: ADDRESS, credentials, scenarioId };
  const answer = await measured(server, 'POST', '/compliance/scenarios/execute', body);
  if (answer.status !== 200) throw new Error(`execute ${scenarioId}: ${answer.status} ${answer.text.slice(0, 300)}`);
  const executionId = JSON.parse(answer.text)[0].executionId;
  const record = await measured(server, 'GET', `/compliance/executions/${executionId}`);
  return { request: Buffer.byteLength(JSON.stringify(body)), answer: answer.bytes, record: record.bytes, results: JSON.parse(answer.text).length };
}

/** The widest scenario of 256 `$in` rules the service accepts: the issue's, or the most values per rule within the cap. */
async function createWide(server) {
  const tried = await request(server, 'POST', '/compliance/scenarios', { id: 'wide', input: { ...httpScenario('Wide'), queryConfigurations: inRules(256) } });
  if (tried.status === 201) return { perRule: 256, issueScenario: 'accepted (201)' };
  let n = 256;
  while (Buffer.byteLength(JSON.stringify(inRules(n))) > RULES_CAP) n--;
  await createScenario(server, 'wide', { ...httpScenario('Wide'), queryConfigurations: inRules(n) });
  return { perRule: n, issueScenario: `refused (${tried.status} ${tried.body?.errors?.[0]?.field ?? ''})` };
}

async function listing(server, scenarioId) {
  const page = await measured(server, 'GET', `/compliance/scenarios/${scenarioId}/executions?limit=100`);
  if (page.status !== 200) throw new Error(`listing ${scenarioId}: ${page.status}`);
  const parsed = JSON.parse(page.text);
  return { ...page, items: parsed.items.length, more: parsed.nextCursor !== null };
}

async function runOn(target) {
  const server = await startServer(target, { env: { CREDENTIAL_VERIFICATION: 'off' } });
  const misses = [];
  try {
    await createScenario(server, 'baseline', httpScenario('Bench baseline'));
    const wide = await createWide(server);
    const attribute = `a${'b'.repeat(190)}`;
    await createScenario(server, 'heavy', {
      ...httpScenario('"'.repeat(256)),
      queryConfigurations: Array.from({ length: 256 }, (_, i) => ({ id: `r${i}`, query: { type: 'IDInformation', attribute, operator: '$exists', value: true } })),
    });
    const executes = [
      ['baseline, 3 credentials', await executeAndRead(server, 'baseline', syntheticIdCredentials())],
      [`wide (256 x ${wide.perRule} values), no credential`, await executeAndRead(server, 'wide', [])],
      ['wide, 100 failing credentials', await executeAndRead(server, 'wide', failing(100))],
      ['heavy, 100 credentials with long ids', await executeAndRead(server, 'heavy', failing(100, (i) => `urn:x:${i}:${'i'.repeat(500)}`))],
    ];
    const base = executes[0][1];
    console.log(`\n${target.kind}: the issue's scenario (256 rules x 256 $in values) ${wide.issueScenario}`);
    console.log(table(['execute', 'request B', 'answer B', 'audit record B', 'answer / baseline', 'B per result', 'per result / baseline'], executes.map(([name, e]) => [
      name, fmt(e.request), fmt(e.answer), fmt(e.record), `${fmt(e.answer / base.answer, 1)}x`, fmt(e.answer / e.results),
      `${fmt((e.answer / e.results) / (base.answer / base.results), 1)}x`,
    ])));
    for (const [name, e] of executes) {
      if (e.answer > GOALS.answer) misses.push(`${name}: answer ${e.answer} B > ${GOALS.answer}`);
      if (e.record > GOALS.record) misses.push(`${name}: audit record ${e.record} B > ${GOALS.record}`);
    }

    const rows = [];
    for (const [scenarioId, credentials] of [['baseline', syntheticIdCredentials()], ['wide', []]]) {
      const before = await databaseBytes(server);
      const body = JSON.stringify({ address: ADDRESS, credentials, scenarioId });
      for (let i = 0; i < EXECUTIONS; i++) {
        const res = await fetch(`${server.base}/compliance/scenarios/execute`, { method: 'POST', headers: AUTH, body });
        if (res.status !== 200) throw new Error(`execute ${scenarioId}: ${res.status}`);
        await res.arrayBuffer();
      }
      const grown = (await databaseBytes(server)) - before;
      const rssBefore = rss(server.pid);
      const page = await listing(server, scenarioId);
      rows.push({ scenarioId, grown, rssBefore, page });
      if (page.bytes > GOALS.page) misses.push(`${scenarioId} listing: ${page.bytes} B > ${GOALS.page}`);
    }
    const lb = rows[0].page;
    console.log(table(
      ['scenario', `db growth, ${EXECUTIONS} executes`, 'page B (limit=100)', 'items', 'more', 'page ms', 'page / baseline ms', 'server CPU ms', 'RSS MB before -> after'],
      rows.map(({ scenarioId, grown, rssBefore, page }) => [
        scenarioId, `${fmt(grown / MIB, 2)} MiB`, fmt(page.bytes), page.items, page.more ? 'yes' : 'no', fmt(page.ms, 1),
        `${fmt(page.ms / lb.ms, 1)}x`, fmt(page.cpuMs, 0), `${fmt(rssBefore)} -> ${fmt(page.rssMb)}`,
      ]),
    ));
  } finally {
    await server.stop();
    await cleanup(server);
  }
  return misses;
}

console.log(`bench/answers.mjs: ${describeRun()}`);
const misses = [];
for (const target of targets()) misses.push(...(await runOn(target)));
console.log(misses.length === 0 ? '\nPASS: answers, audit records and pages within their bounds' : `\nFAIL:\n  ${misses.join('\n  ')}`);
process.exitCode = misses.length === 0 ? 0 : 1;
