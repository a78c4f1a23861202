// The token lives in sessionStorage only: gone when the tab closes, never sent anywhere but this origin's API.
const KEY = 'scs-console-token';

export const session = {
  get: () => sessionStorage.getItem(KEY),
  set: (token) => sessionStorage.setItem(KEY, token),
  clear: () => sessionStorage.removeItem(KEY),
};

let onUnauthorized = () => {};
export const whenUnauthorized = (fn) => { onUnauthorized = fn; };

/** One call to the public API; answers { status, ok, data, headers }, never throws for an HTTP status. */
export async function api(method, path, { body, headers = {}, token = session.get() } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: { authorization: `Bearer ${token ?? ''}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (err) {
    return { status: 0, ok: false, data: { title: 'The service did not answer', detail: String(err) }, headers: new Headers() };
  }
  const text = await res.text();
  let data = null;
  try { data = text === '' ? null : JSON.parse(text); } catch { data = { title: text.slice(0, 300) }; }
  if (res.status === 401 && token === session.get()) onUnauthorized();
  return { status: res.status, ok: res.ok, data, headers: res.headers };
}

/** A problem+json's one-line summary. */
export const problemText = (r) => [r.data?.title, r.data?.detail].filter(Boolean).join(': ') || `HTTP ${r.status}`;
