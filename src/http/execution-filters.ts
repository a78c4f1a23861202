/** The query parameters that narrow executions by verdict, address and period: the listing, the summary and the export share them. */
import { Type } from '@sinclair/typebox';
import { parseAddress } from '../domain/address.js';
import { StringEnum } from '../schemas/common.js';
import type { ExecutionFilter } from '../services/executions.js';
import { ValidationFailed } from './errors.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

export const invalidQuery = (name: string, message: string) =>
  new ValidationFailed([{ field: `querystring.${name}`, pointer: `/${name}`, message }]);

/** An RFC 3339 date-time as the store keeps instants (UTC, milliseconds); a day past its month's end is refused. */
function instant(text: string, name: string): string {
  const parts = RFC3339.exec(text);
  const [year, month, day] = [Number(parts?.[1]), Number(parts?.[2]), Number(parts?.[3])];
  const time = Date.parse(text);
  if (!parts || Number.isNaN(time) || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) {
    throw invalidQuery(name, 'must be an RFC 3339 date-time, e.g. 2026-03-01T00:00:00Z');
  }
  return new Date(time).toISOString();
}

const VERDICTS = ['passed', 'failed', 'error', 'pending'] as const;

export const VerdictQuery = Type.Optional(StringEnum(VERDICTS, { description: 'Only the executions with this verdict.' }));
export const AddressQuery = Type.Optional(Type.String({
  minLength: 1, maxLength: 256, description: 'Only the executions for this address, as execute recorded it (the address string it was sent, same case).',
  examples: ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
}));
/** As the export takes it: the list, the summary and the export then read the same project's executions. */
export const ProjectFilterQuery = Type.Optional(Type.String({
  maxLength: 128,
  description: 'Only this project\'s executions (empty: those without a project, operator tokens). A project the token does not hold ' +
    'lists and counts nothing.',
}));
export const FromQuery = (required: string) => Type.String({ maxLength: 64, description: `Start of the period (RFC 3339), inclusive${required}.`, examples: ['2026-03-01T00:00:00Z'] });
export const ToQuery = (required: string) => Type.String({ maxLength: 64, description: `End of the period (RFC 3339), exclusive; after \`from\`${required}.`, examples: ['2026-04-01T00:00:00Z'] });

type FilterParams = { verdict?: ExecutionFilter['verdict']; address?: string; from?: string; to?: string };

/** Checks and normalises the narrowing parameters given: 400 naming the one that is not valid. */
export function filterOf(query: FilterParams): ExecutionFilter {
  const filter: ExecutionFilter = {};
  if (query.verdict !== undefined) filter.verdict = query.verdict;
  if (query.address !== undefined) {
    const parsed = parseAddress(query.address);
    if (!parsed.ok) throw invalidQuery('address', parsed.message);
    filter.address = parsed.address;
  }
  if (query.from !== undefined) filter.from = instant(query.from, 'from');
  if (query.to !== undefined) filter.to = instant(query.to, 'to');
  if (filter.from !== undefined && filter.to !== undefined && filter.from >= filter.to) throw invalidQuery('to', 'must be after from');
  return filter;
}

/** The same, of a query whose period is required. */
export function periodFilterOf(query: FilterParams & { from: string; to: string }): ExecutionFilter & { from: string; to: string } {
  const filter = filterOf(query);
  return { ...filter, from: filter.from ?? instant(query.from, 'from'), to: filter.to ?? instant(query.to, 'to') };
}
