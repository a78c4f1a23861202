/**
 * Array element access for tests under noUncheckedIndexedAccess: each answers the element, or throws a message saying
 * what is missing where `list[0].x` would fail with "Cannot read properties of undefined". Imports nothing on purpose:
 * unit tests use it without loading the app, which test/helpers.ts imports.
 */

/** The element at index, which the test expects to exist. */
export function at<T>(list: readonly T[], index: number): T {
  if (!Number.isInteger(index) || index < 0 || index >= list.length) {
    throw new Error(`expected an element at index ${index}, but the list has ${list.length}`);
  }
  return list[index] as T;
}

/** The first element, which the test expects to exist. */
export function first<T>(list: readonly T[]): T {
  return at(list, 0);
}

/** The one element of a list the test expects to hold exactly one. */
export function only<T>(list: readonly T[]): T {
  if (list.length !== 1) throw new Error(`expected exactly one element, but the list has ${list.length}`);
  return list[0] as T;
}

/** The entry of a record under key, which the test expects to exist. */
export function entry<T>(record: Readonly<Record<string, T>>, key: string): T {
  if (!Object.hasOwn(record, key)) throw new Error(`expected an entry ${JSON.stringify(key)}, but the keys are ${Object.keys(record).join(', ')}`);
  return record[key] as T;
}
