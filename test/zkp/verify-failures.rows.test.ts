/**
 * The failure table, row by row: each row's failure made by the installed library (failure-triggers.ts) is
 * recognised as that row. A reworded message or a new class fails its row here.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_TABLE, findFailure } from '../../src/zkp/verify-failures.js';
import { TRIGGERS, type TriggerEnv } from './failure-triggers.js';
import { createLibrary, steeredResolvers } from './library.js';

let env: TriggerEnv;
beforeAll(async () => {
  const steer = steeredResolvers();
  env = { lib: await createLibrary(steer.resolvers), steer };
});

describe('each failure of the table, raised by the installed library, is recognised as its row', () => {
  it('has a trigger for every row, and no other', () => {
    expect(Object.keys(TRIGGERS).sort()).toEqual(FAILURE_TABLE.map((f) => f.id).sort());
  });

  it.each(FAILURE_TABLE.map((f) => [f.id, f.verdict] as const))('%s (%s)', async (id) => {
    const trigger = TRIGGERS[id];
    if (!trigger) throw new Error(`no trigger for ${id}`);
    const error = await trigger(env);
    expect(findFailure(error)?.id, error instanceof Error ? error.message : String(error)).toBe(id);
  });
});
