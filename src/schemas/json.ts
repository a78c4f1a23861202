/** A JSON object: not null, not an array. The one guard of parsed input (bodies, credentials, answers, documents). */
export const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
