import type { Scenario } from '../schemas/scenario.js';

/** A stored scenario. `seq` is unique for the life of the database (never reused after a delete). */
export interface ScenarioRow {
  seq: number;
  id: string;
  input: Scenario;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export interface ScenarioPage {
  items: ScenarioRow[];
  /** The `seq` to continue after, when there may be more. */
  next?: number;
}

/**
 * Where scenarios live. Every method is atomic; `update` is a compare-and-set on the revision so that concurrent
 * writers (threads, processes or instances) never lose an update.
 */
export interface ScenarioStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Inserts a scenario at revision 1; null when the id is taken. */
  create(id: string, input: Scenario, now: string): Promise<ScenarioRow | null>;
  get(id: string): Promise<ScenarioRow | undefined>;
  /** The current seq and revision only: cheap, for checking a cached plan. */
  head(id: string): Promise<{ seq: number; revision: number } | undefined>;
  /** Scenarios in creation order, after the given seq. */
  list(limit: number, after?: number): Promise<ScenarioPage>;
  /** Writes `input` as revision expectedRevision + 1; null when the row is gone or its revision moved. */
  update(id: string, input: Scenario, expectedRevision: number, now: string): Promise<ScenarioRow | null>;
  delete(id: string): Promise<boolean>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
