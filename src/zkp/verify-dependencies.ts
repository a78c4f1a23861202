/**
 * What the verifier library depends on, watched: a state resolver's RPC down, a JSON-LD document missing. Such a
 * failure is recorded for the check that was running when it happened, so that its verdict says "error" (undecided)
 * instead of what the library makes of it (it re-raises or rewords the failure, e.g. "can't load schema").
 * The record goes by the call, not by the message: the watched resolver or loader itself notes that it failed.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { JsonLdLoader } from '../jsonld/documents.js';
import type { StateResolver, StateResolvers } from './state.js';
import { isResolverFact } from './verify-failures.js';

/** The resolvers and loader to hand to the library, and `run`, which says what of them failed during a check. */
export interface DependencyWatch {
  resolvers: StateResolvers;
  loader: JsonLdLoader;
  /** Runs `check`; on its failure, also what dependencies failed meanwhile (empty: none did). */
  run<T>(check: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown; failed: string[] }>;
}

export function watchDependencies(resolvers: StateResolvers, loader: JsonLdLoader): DependencyWatch {
  const calls = new AsyncLocalStorage<string[]>();
  const note = (what: string) => calls.getStore()?.push(what);

  function watchResolver(r: StateResolver, chain: string): StateResolver {
    const guard = async <T>(f: () => Promise<T>): Promise<T> => {
      try {
        return await f();
      } catch (e) {
        // An answer of the state contract about the proof's state is a fact, not a failure of the resolver.
        if (!isResolverFact(e)) note(`the state resolver of ${chain} failed`);
        throw e;
      }
    };
    return {
      resolve: (id, state) => guard(() => r.resolve(id, state)),
      rootResolve: (state) => guard(() => r.rootResolve(state)),
    };
  }

  // Wrapped at each look-up (a small object): nothing kept per chain key, whatever keys the resolvers answer for.
  const none: StateResolvers = {};
  const watchedResolvers = new Proxy(none, {
    get(_t, key) {
      const r = typeof key === 'string' ? resolvers[key] : undefined;
      return r && typeof key === 'string' ? watchResolver(r, key) : undefined;
    },
  });

  const watchedLoader: JsonLdLoader = Object.assign(async (url: string) => {
    try {
      return await loader(url);
    } catch (e) {
      note(`the JSON-LD document ${JSON.stringify(String(url).slice(0, 200))} is not available to the verifier`);
      throw e;
    }
  }, { has: (url: string) => loader.has(url), urls: loader.urls });

  return {
    resolvers: watchedResolvers,
    loader: watchedLoader,
    async run(check) {
      const failed: string[] = [];
      try {
        return { ok: true, value: await calls.run(failed, check) };
      } catch (error) {
        return { ok: false, error, failed };
      }
    },
  };
}
