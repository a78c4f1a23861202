/**
 * A dependency's failure makes the running check's verdict "error", not what the library rewords it into. Recorded by
 * the call, not by the message.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { JsonLdLoader } from '../jsonld/documents.js';
import type { StateResolver, StateResolvers } from './state.js';
import { isResolverFact } from './verify-failures.js';

export interface DependencyWatch {
  resolvers: StateResolvers;
  loader: JsonLdLoader;
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

  // Wrapped at each look-up: nothing kept per chain key.
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
