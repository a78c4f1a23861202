import { describe, expect, it } from 'vitest';
import { verdictOf } from '../../src/domain/verdict.js';
import type { RuleStatus } from '../../src/schemas/execution.js';

const of = (...statuses: RuleStatus[]) => verdictOf(statuses.map((status) => ({ status })));

describe('verdictOf', () => {
  it('is passed only when every rule is valid', () => {
    expect(of('valid')).toBe('passed');
    expect(of('valid', 'valid', 'valid')).toBe('passed');
  });
  it('is failed when any rule is not-valid, whatever the others are', () => {
    expect(of('valid', 'not-valid')).toBe('failed');
    expect(of('error', 'pending', 'not-valid')).toBe('failed');
    expect(of('not-valid', 'error')).toBe('failed');
  });
  it('is error when a rule could not be decided and none is not-valid', () => {
    expect(of('valid', 'error')).toBe('error');
    expect(of('pending', 'error', 'valid')).toBe('error');
  });
  it('is pending when rules await a proof and none failed or erred', () => {
    expect(of('pending', 'pending')).toBe('pending');
    expect(of('valid', 'pending')).toBe('pending');
  });
});
