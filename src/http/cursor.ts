import { ValidationFailed } from './errors.js';

/** Opaque page cursors: the seq to continue from, base64url-wrapped so clients do not build them. */
export const encodeCursor = (seq: number) => Buffer.from(`s${seq}`).toString('base64url');

export function decodeCursor(cursor: string): number {
  const m = /^s(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) {
    throw new ValidationFailed([{ field: 'querystring.cursor', pointer: '/cursor', message: 'is not a cursor this service issued' }]);
  }
  return Number(m[1]);
}
