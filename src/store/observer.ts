/** Told how long each store operation takes (the metrics), without the store knowing what listens. */
export interface StoreObserver {
  startOperation(operation: string): (outcome: 'ok' | 'error') => void;
}

export function observeStore<S extends object>(store: S, observer: StoreObserver): S {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'close') return value;
      const operation = String(prop);
      return (...args: unknown[]) => {
        const end = observer.startOperation(operation);
        const result = value.apply(target, args);
        if (result instanceof Promise) {
          return result.then(
            (v) => { end('ok'); return v; },
            (e) => { end('error'); throw e; },
          );
        }
        end('ok');
        return result;
      };
    },
  });
}
