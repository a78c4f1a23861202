/** The contract of the webhook outbox, on both stores. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { ExecutionRecord, Store } from '../../src/store/types.js';
import { tempDir } from '../helpers.js';
import { PG_URL, freshSchema, pgAvailable } from '../pg.js';
import { execution, fair, now, sharedStore, storeBackends } from './contract.js';

describe.each(storeBackends('contract_webhooks'))('%s store: webhooks', (_name, open, available) => {
  const store = sharedStore(open, available);

  it.skipIf(!available)('writes an execution\'s webhook in its record\'s commit: with it, or not at all; replays a delivery', async () => {
    const at = now();
    const withHook = (e: ExecutionRecord): ExecutionRecord => ({
      ...e,
      webhook: {
        id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed', url: 'https://hooks.example/own', payload: '{"x":1}',
        state: 'pending', attempts: 0, nextAttemptAt: at, lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
      },
    });
    // Concurrent records share a group commit; each keeps its own delivery, and a record without one gets none.
    const batch = [withHook(execution()), withHook(execution()), execution()];
    await Promise.all(batch.map((e) => store.recordExecution(e)));
    for (const e of batch) {
      expect((await store.webhooksOf(e.executionId)).map((w) => [w.id, w.url])).toEqual(e.webhook ? [[e.webhook.id, 'https://hooks.example/own']] : []);
    }
    // A record the database refuses (its id taken) takes its delivery with it.
    const again = withHook(batch[2]!);
    await expect(store.recordExecution(again)).rejects.toThrow();
    expect(await store.webhooksOf(again.executionId)).toEqual([]);

    const delivery = batch[0]!.webhook!;
    const lease = new Date(Date.now() + 60_000).toISOString();
    expect((await store.claimWebhooks(at, 1000, lease, fair)).map((d) => d.id)).toContain(delivery.id);
    await store.updateWebhook({ id: delivery.id, state: 'failed', attempts: 3, nextAttemptAt: at, lastStatus: 500, lastError: 'answered 500', updatedAt: at }, lease);
    const later = new Date(Date.now() + 1000).toISOString();
    expect(await store.replayWebhook(batch[0]!.executionId, delivery.id, later))
      .toMatchObject({ id: delivery.id, state: 'pending', attempts: 0, nextAttemptAt: later, lastStatus: 500 });
    expect(await store.replayWebhook(batch[1]!.executionId, delivery.id, later)).toBeUndefined();
    expect(await store.replayWebhook(batch[0]!.executionId, crypto.randomUUID(), later)).toBeUndefined();
  });

  it.skipIf(!available)('leases due webhooks so that two pollers never take the same one, and records attempts', async () => {
    const e = execution({ state: 'pending', pending: { thid: 'w', expiresAt: 1 } });
    await store.recordExecution(e);
    const now = new Date().toISOString();
    const id = crypto.randomUUID();
    await store.completeExecution(e.executionId, {
      state: 'completed', results: e.results, updatedAt: now,
      webhook: { id, executionId: e.executionId, event: 'execution.completed', payload: '{}', state: 'pending', attempts: 0, nextAttemptAt: now, lastStatus: null, lastError: null, createdAt: now, updatedAt: now },
    });
    const far = new Date(Date.now() + 60_000).toISOString();
    const [first, second] = await Promise.all([store.claimWebhooks(far, 100, far, fair), store.claimWebhooks(far, 100, far, fair)]);
    const taken = [...first, ...second].filter((d) => d.id === id);
    expect(taken).toHaveLength(1);
    // An attempt recorded under a lease that is not the one held is not recorded.
    await store.updateWebhook({ id, state: 'failed', attempts: 1, nextAttemptAt: now, lastStatus: 500, lastError: 'x', updatedAt: now }, now);
    expect((await store.webhooksOf(e.executionId))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    await store.updateWebhook({ id, state: 'delivered', attempts: 1, nextAttemptAt: now, lastStatus: 200, lastError: null, updatedAt: now }, far);
    expect((await store.webhooksOf(e.executionId))[0]).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 200 });
    expect((await store.claimWebhooks(far, 100, far, fair)).filter((d) => d.id === id)).toHaveLength(0);
  });

  it.skipIf(!available)('keeps a replay asked during an attempt: the attempt\'s end does not overwrite it, and it is due once the attempt ends', async () => {
    const e = execution();
    const at = now();
    const id = crypto.randomUUID();
    await store.recordExecution({
      ...e,
      webhook: { id, executionId: e.executionId, event: 'execution.completed', url: `https://replay.example/${id}`, payload: '{}', state: 'pending', attempts: 0, nextAttemptAt: at, lastStatus: null, lastError: null, createdAt: at, updatedAt: at },
    });
    const lease = new Date(Date.now() + 60_000).toISOString();
    const mine = (claimed: Awaited<ReturnType<Store['claimWebhooks']>>) => claimed.filter((d) => d.id === id);
    expect(mine(await store.claimWebhooks(at, 1000, lease, fair))).toHaveLength(1);
    // The replay, while the attempt is in flight: not taken by another poller meanwhile.
    expect(await store.replayWebhook(e.executionId, id, now())).toMatchObject({ state: 'pending', attempts: 0 });
    expect(mine(await store.claimWebhooks(now(), 1000, lease, fair))).toEqual([]);
    await store.updateWebhook({ id, state: 'delivered', attempts: 1, nextAttemptAt: now(), lastStatus: 200, lastError: null, updatedAt: now() }, lease);
    expect((await store.webhooksOf(e.executionId))[0]).toMatchObject({ state: 'pending', attempts: 0 });
    const again = mine(await store.claimWebhooks(new Date(Date.now() + 1000).toISOString(), 1000, lease, fair));
    expect(again).toHaveLength(1);
  });

  it.skipIf(!available)('claims fairly: at most perTarget of one target, none of a skipped target or project, and takes released ones again', async () => {
    const at = '2026-03-01T00:00:00.000Z';
    const delivery = (executionId: string, url: string, k: number) => ({
      id: crypto.randomUUID(), executionId, event: 'execution.completed' as const, url, payload: '{}', state: 'pending' as const, attempts: 0,
      // The hanging target's deliveries are all due before the other's.
      nextAttemptAt: new Date(Date.parse(at) + k).toISOString(), lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
    });
    const tag = crypto.randomUUID();
    // One target: the origin, whatever the path.
    const hanging = `https://${tag}.b.example`;
    const other = `https://${tag}.a.example/a`;
    const records = [
      ...Array.from({ length: 6 }, () => execution({ projectId: `b-${tag}`, createdAt: at, updatedAt: at })).map((e, k) => ({ ...e, webhook: delivery(e.executionId, `${hanging}/${k}`, k) })),
      ...[execution({ projectId: `a-${tag}`, createdAt: at, updatedAt: at })].map((e) => ({ ...e, webhook: delivery(e.executionId, other, 100) })),
    ];
    await Promise.all(records.map((r) => store.recordExecution(r)));
    const ours = (claimed: Awaited<ReturnType<Store['claimWebhooks']>>) => claimed.filter((d) => d.url?.includes(tag));
    const due = new Date(Date.parse(at) + 1000).toISOString();
    const lease = new Date(Date.now() + 60_000).toISOString();

    const first = ours(await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 2 }));
    // Projects in turn: A's only delivery before B's second, though B's are all due first.
    expect(first.map((d) => d.id)).toEqual([records[0]!.webhook.id, records[6]!.webhook.id, records[1]!.webhook.id]);
    expect(first.map((d) => d.projectId)).toEqual([`b-${tag}`, `a-${tag}`, `b-${tag}`]);
    // Skipped targets and projects are left alone, leased ones are not taken twice.
    expect(ours(await store.claimWebhooks(due, 100, lease, { ...fair, skipTargets: [hanging] }))).toEqual([]);
    expect(ours(await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 1, skipProjects: [`a-${tag}`] })).map((d) => d.id)).toEqual([records[2]!.webhook.id]);
    // Given back, a delivery is taken again.
    await store.releaseWebhooks([records[6]!.webhook.id, records[2]!.webhook.id], lease);
    expect(ours(await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 1 })).map((d) => d.id)).toEqual([records[2]!.webhook.id, records[6]!.webhook.id]);
  });

  it.skipIf(!available)('claims projects in turn: each project\'s earliest due delivery before any project\'s next', async () => {
    const at = '2026-02-01T00:00:00.000Z';
    const tag = crypto.randomUUID();
    // Project A's backlog is all due before B's, and B's before C's; each delivery to its own origin.
    const records = (['a', 'b', 'c'] as const).flatMap((p, pi) => Array.from({ length: 3 }, (_, k) => {
      const e = execution({ projectId: `${p}-${tag}`, createdAt: at, updatedAt: at });
      const t = new Date(Date.parse(at) + pi * 100 + k).toISOString();
      return {
        ...e,
        webhook: {
          id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed' as const, url: `https://${p}${k}.${tag}.example/`, payload: '{}',
          state: 'pending' as const, attempts: 0, nextAttemptAt: t, lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
        },
      };
    }));
    await Promise.all(records.map((r) => store.recordExecution(r)));
    const due = new Date(Date.parse(at) + 1000).toISOString();
    const lease = new Date(Date.now() + 60_000).toISOString();
    const claimed = (await store.claimWebhooks(due, 100, lease, fair)).filter((d) => d.url?.includes(tag));
    expect(claimed.map((d) => d.projectId?.slice(0, 1))).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
    // With room for three, each project gets one.
    await store.releaseWebhooks(claimed.map((d) => d.id), lease);
    const three = await store.claimWebhooks(due, 3, lease, fair);
    expect(three.map((d) => d.projectId)).toEqual([`a-${tag}`, `b-${tag}`, `c-${tag}`]);
  });

  it.skipIf(!available)('claims within the rooms it is given: of a target and of a project, the defaults for the others', async () => {
    const at = '2026-04-01T00:00:00.000Z';
    const tag = crypto.randomUUID();
    const busy = `https://${tag}.busy.example`;
    const idle = `https://${tag}.idle.example`;
    // Six to each target; the busy target's in project b, the idle one's in project i.
    const records = [busy, idle].flatMap((url, ti) => Array.from({ length: 6 }, (_, k) => {
      const e = execution({ projectId: `${ti === 0 ? 'b' : 'i'}-${tag}`, createdAt: at, updatedAt: at });
      return {
        ...e,
        webhook: {
          id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed' as const, url: `${url}/${k}`, payload: '{}',
          state: 'pending' as const, attempts: 0, nextAttemptAt: new Date(Date.parse(at) + ti * 100 + k).toISOString(), lastStatus: null,
          lastError: null, createdAt: at, updatedAt: at,
        },
      };
    }));
    await Promise.all(records.map((r) => store.recordExecution(r)));
    const due = new Date(Date.parse(at) + 1000).toISOString();
    const lease = new Date(Date.now() + 60_000).toISOString();
    const ours = (claimed: Awaited<ReturnType<Store['claimWebhooks']>>) => claimed.filter((d) => d.url?.includes(tag));
    const urls = (claimed: Awaited<ReturnType<Store['claimWebhooks']>>) => ours(claimed).map((d) => d.url!.slice(0, d.url!.lastIndexOf('/')));

    // The busy target has room for 2, the other gets perTarget (4).
    const first = await store.claimWebhooks(due, 100, lease, { ...fair, perTarget: 4, targetRooms: { [busy]: 2 } });
    expect(urls(first).filter((u) => u === busy)).toHaveLength(2);
    expect(urls(first).filter((u) => u === idle)).toHaveLength(4);
    await store.releaseWebhooks(ours(first).map((d) => d.id), lease);
    // Project rooms: b has room for 1, the others perProject (3).
    const second = await store.claimWebhooks(due, 100, lease, { ...fair, perProject: 3, projectRooms: { [`b-${tag}`]: 1 } });
    expect(urls(second).filter((u) => u === busy)).toHaveLength(1);
    expect(urls(second).filter((u) => u === idle)).toHaveLength(3);
    await store.releaseWebhooks(ours(second).map((d) => d.id), lease);
  });
});

/** Another connection to the same database: what it sees was committed. */
type Peek = (ids: readonly string[]) => Promise<Array<{ id: string; state: string; attempts: number; lease: boolean; replay: number }>>;

describe.each([
  ['sqlite', async (): Promise<[Store, Peek, () => Promise<void>]> => {
    const file = path.join(tempDir(), 'b.db');
    const store = openSqliteStore({ file, synchronous: 'NORMAL' });
    const { default: Database } = await import('better-sqlite3');
    const other = new Database(file, { readonly: true });
    const peek: Peek = async (ids) => ids.map((id) => other.prepare<[string], { id: string; state: string; attempts: number; lease: string | null; replay: number }>(
      'SELECT id, state, attempts, lease_until AS lease, replay_requested AS replay FROM webhook_deliveries WHERE id = ?',
    ).get(id)!).map((r) => ({ ...r, lease: r.lease !== null }));
    return [store, peek, async () => { other.close(); await store.close(); }];
  }, true],
  ['postgres', async (): Promise<[Store, Peek, () => Promise<void>]> => {
    const schema = freshSchema('webhook_batch');
    const store = await openPostgresStore({ url: PG_URL, schema });
    const pg = (await import('pg')).default;
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    const peek: Peek = async (ids) => {
      const { rows } = await other.query<{ id: string; state: string; attempts: number; lease: boolean; replay: number }>(
        `SELECT id, state, attempts, lease_until IS NOT NULL AS lease, replay_requested AS replay FROM ${schema}.webhook_deliveries WHERE id = ANY($1::uuid[])`,
        [ids],
      );
      return ids.map((id) => rows.find((r) => r.id === id)!);
    };
    return [store, peek, async () => {
      await store.close();
      await other.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await other.end();
    }];
  }, pgAvailable],
] as const)('%s store: attempts recorded together', (_name, open, available) => {
  it.skipIf(!available)('records the attempts that end together in one batch, each acknowledged once committed, each row by its own lease', async () => {
    const [store, peek, close] = await open();
    try {
      const at = now();
      const records = Array.from({ length: 40 }, () => {
        const e = execution({ createdAt: at, updatedAt: at });
        return {
          ...e,
          webhook: {
            id: crypto.randomUUID(), executionId: e.executionId, event: 'execution.completed' as const, url: 'https://batch.example/hook', payload: '{}',
            state: 'pending' as const, attempts: 0, nextAttemptAt: at, lastStatus: null, lastError: null, createdAt: at, updatedAt: at,
          },
        };
      });
      await Promise.all(records.map((r) => store.recordExecution(r)));
      const lease = new Date(Date.now() + 60_000).toISOString();
      const claimed = await store.claimWebhooks(now(), 100, lease, fair);
      expect(claimed).toHaveLength(40);
      const [stale, replayed, ...rest] = records.map((r) => r.webhook);
      // A replay asked during its attempt: the attempt's end only ends its lease.
      await store.replayWebhook(records[1]!.executionId, replayed!.id, now());
      const attempt = (id: string, state: 'delivered' | 'pending') => ({
        id, state, attempts: 1, nextAttemptAt: now(), lastStatus: state === 'delivered' ? 204 : 500, lastError: state === 'delivered' ? null : 'answered 500', updatedAt: now(),
      });
      // All in one turn of the event loop: one batch. The stale one names a lease that is not the one held.
      await Promise.all([
        store.updateWebhook(attempt(stale!.id, 'delivered'), now()),
        store.updateWebhook(attempt(replayed!.id, 'delivered'), lease),
        ...rest.map((w, k) => store.updateWebhook(attempt(w.id, k % 2 === 0 ? 'delivered' : 'pending'), lease)),
      ]);
      // Seen by another connection as soon as they are acknowledged.
      const rows = await peek(records.map((r) => r.webhook.id));
      expect(rows[0]).toMatchObject({ state: 'pending', attempts: 0, lease: true });
      expect(rows[1]).toMatchObject({ state: 'pending', attempts: 0, lease: false, replay: 0 });
      expect(rows.slice(2).map((r) => [r.state, r.attempts, r.lease])).toEqual(rest.map((_, k) => [k % 2 === 0 ? 'delivered' : 'pending', 1, false]));
    } finally {
      await close();
    }
  });
});
