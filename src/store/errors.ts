/** The database cannot be reached or did not answer in time: a 503 with Retry-After, never a 500. */
export class StoreUnavailable extends Error {
  readonly statusCode = 503;
  readonly code = 'SCS_DATABASE_UNAVAILABLE';
  constructor(readonly cause?: unknown) {
    super('The database is not available; retry shortly');
  }
}

const PG_UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement_timeout)
  '53300', // too_many_connections
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
]);
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);

/** Whether an error from a database driver means "not reachable now" rather than a bug. */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (PG_UNAVAILABLE_CODES.has(code) || NET_CODES.has(code))) return true;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return true;
  if (code === 'SCS_WRITER_GONE') return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(err.message);
}

/** Runs a database call, turning "not reachable" errors into StoreUnavailable. */
export async function guard<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw isUnavailable(err) ? new StoreUnavailable(err) : err;
  }
}

/** An update would move a scenario into a project that has a scenario with its id (ids are unique per project). */
export class ScenarioIdTaken extends Error {
  constructor(readonly projectId: string | null) {
    super('The target project has a scenario with this id already');
  }
}

/** Whether a driver error is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
