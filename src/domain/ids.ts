import { v7 } from 'uuid';

/**
 * A UUID of version 7 (RFC 9562): 48 bits of milliseconds, then 74 random bits. The ids of executions and webhook
 * deliveries are keys of indexes every execute writes; a random (version 4) key puts each new row on a random B-tree
 * page, which the commit then writes out whole, where a time-ordered one appends to the last page.
 */
export const timeOrderedId = (): string => v7();
