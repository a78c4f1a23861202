import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ValidationFailed } from './errors.js';

/** Opaque page cursors: the seq to continue from, base64url-wrapped so clients do not build them. */
const encodeCursor = (seq: number) => Buffer.from(`s${seq}`).toString('base64url');

function decodeCursor(cursor: string): number {
  const m = /^s(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) {
    throw new ValidationFailed([{ field: 'querystring.cursor', pointer: '/cursor', message: 'is not a cursor this service issued' }]);
  }
  return Number(m[1]);
}

/** The query string of every paged listing. */
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The nextCursor of the previous page.' })),
  },
  { additionalProperties: false },
);

/** A page of items; nextCursor is null on the last page. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item, { description: 'The items of this page.' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass it as `cursor` for the next page; null on the last page.' }),
  }, { additionalProperties: false });

/** Reads a PageQuery: the limit (defaulted by the schema) and the seq the cursor names, if any. */
export function pageOf({ limit = 20, cursor }: Static<typeof PageQuery>): { limit: number; from?: number } {
  return { limit, from: cursor === undefined ? undefined : decodeCursor(cursor) };
}

/** The response of a page the store answered. */
export function pageResponse<T, U>(page: { items: T[]; next?: number }, view: (item: T) => U) {
  return { items: page.items.map(view), nextCursor: page.next === undefined ? null : encodeCursor(page.next) };
}
