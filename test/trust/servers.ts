/** Real local HTTP servers for the trust tests (127.0.0.1 only). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An answer: `json` (as application/json), or `text` sent as it is; `headers` add to or replace the defaults. */
export type Handler = (req: http.IncomingMessage, body: string) => Promise<{
  status?: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
  hang?: boolean;
}>;

export interface TestServer {
  url: string;
  hits: string[];
  close(): Promise<void>;
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const hits: string[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      hits.push(`${req.method} ${req.url}`);
      handler(req, body).then(
        (r) => {
          if (r.hang) {
            hanging.add(res);
            return;
          }
          res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
          res.end(r.text ?? JSON.stringify(r.json ?? null));
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const s = await startServer(async () => ({ json: null }));
  const url = s.url;
  await s.close();
  return url;
}
