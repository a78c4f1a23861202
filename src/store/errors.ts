import createError from '@fastify/error';
import { ConfigError } from '../config/errors.js';

/** A 503 with Retry-After, never a 500. */
const StoreUnavailable = createError<[{ cause: unknown }]>('SCS_DATABASE_UNAVAILABLE', 'The database is not available; retry shortly', 503);

export function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
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

function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = codeOf(err);
  if (typeof code === 'string' && (PG_UNAVAILABLE_CODES.has(code) || NET_CODES.has(code))) return true;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return true;
  // A failing disk or a size limit: nothing is wrong with the request.
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) return true;
  if (code === 'SCS_WRITER_GONE') return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(err.message);
}

/** SQLITE_FULL, SQLSTATE 53100: nothing of the write was kept. 503, not 507: clients know what 503 asks. */
export class StorageFull extends createError<[{ cause: unknown }]>(
  'SCS_STORAGE_FULL', 'The database\'s storage is full: nothing was written. Retry later; the operator must free space', 503,
) {
  /** Freeing space takes an operator: no point in retrying within the second. */
  readonly retryAfterSeconds = 30;
}

function isStorageFull(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'SQLITE_FULL' || code === '53100';
}

export function storeError(err: unknown): unknown {
  if (isStorageFull(err)) return new StorageFull({ cause: err });
  return isUnavailable(err) ? new StoreUnavailable({ cause: err }) : err;
}

export async function guard<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw storeError(err);
  }
}

/** Ids are unique per project. */
export class ScenarioIdTaken extends Error {
  constructor(readonly projectId: string | null) {
    super('The target project has a scenario with this id already');
  }
}

export function isUniqueViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

/** An AggregateError of several addresses: its first error's. */
function errorCode(err: Error): string | undefined {
  const code = codeOf(err) ?? ('errors' in err && Array.isArray(err.errors) ? codeOf(err.errors[0]) : undefined);
  return typeof code === 'string' ? code : undefined;
}

/** One ConfigError line saying what to do; undefined for a bug, whose stack is wanted. `target` holds no password. */
export function postgresStartError(err: unknown, target: string, connectTimeoutMs: number): ConfigError | undefined {
  const e = err instanceof StoreUnavailable ? err.cause : err;
  if (!(e instanceof Error)) return undefined;
  const code = errorCode(e) ?? '';
  const at = `DATABASE_URL: PostgreSQL at ${target}`;
  const said = `(${e.message.replace(/\s+/g, ' ').trim()})`;
  const line = (what: string) => new ConfigError(`${at} ${what}`);
  if (code === 'ECONNREFUSED') return line('refused the connection: nothing listens there. Start PostgreSQL, or correct the host and port');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return line(`cannot be reached: the host name does not resolve (${code}). Correct the host`);
  if (['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code) || /timeout exceeded when trying to connect|connection timeout/i.test(e.message)) {
    return line(`did not answer within ${connectTimeoutMs} ms (DATABASE_CONNECT_TIMEOUT_MS): check that it runs and that this host can reach it`);
  }
  if (code === '3D000') return line(`has no such database ${said}: create it (createdb), or name an existing database`);
  if (code.startsWith('28')) return line(`refused the login ${said}: correct the user or password, or allow them in the server's pg_hba.conf`);
  if (/SASL|password must be a string/.test(e.message)) return line('asks for a password: put it in the URL (postgres://user:password@host:port/db)');
  if (code === '42501') return line(`refused a step of the migrations ${said}: grant the user CREATE on the database (and on DATABASE_SCHEMA's schema)`);
  if (code === '57P03' || code === '53300' || code.startsWith('08')) return line(`does not take connections now ${said}: retry once it does`);
  if (/CERT|TLS|SSL/.test(code) || /\b(SSL|TLS)\b|certificate/i.test(e.message)) return line(`failed at TLS ${said}: correct sslmode in the URL, or the server's certificate`);
  if (code === 'ECONNRESET' || /Connection terminated/i.test(e.message)) return line(`closed the connection ${said}: see the server's log`);
  // Any other error the server answered (a DatabaseError has a severity).
  if ('severity' in e) return line(`failed at start ${said}, SQLSTATE ${code}: see the server's log`);
  return undefined;
}
