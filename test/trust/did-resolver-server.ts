/**
 * A local DID resolver that answers `GET /1.0/identifiers/{did}[?state={hex}]` as driver-did-iden3 (iden3's resolver,
 * behind the iden3 and Privado ID endpoints) does since its February 2026 releases (pkg/app/handler.go,
 * pkg/services/did.go, pkg/document/did.go), for BabyJubJub-keyed identities on any network @iden3/js-iden3-core knows:
 * - content negotiation: `Accept` absent or `*` + `/*` gives a DID resolution result, as does
 *   `application/did-resolution`; `application/did+ld+json` and `application/did+json` give the DID document alone
 *   (the latter without `@context`); the first supported type of the list wins, parameters are ignored; anything
 *   else (`application/json` included) is 406 with a resolution result whose error is REPRESENTATION_NOT_SUPPORTED.
 *   Resolution results and errors are `Content-Type: application/did-resolution` (no parameters).
 * - `?state=` of a published state: `published: true` and `info` (the state, `replacedByState` all zeros while it is
 *   the latest, the next state once replaced); of an unpublished state: 404 NOT_FOUND ("state not found"), except
 *   the identity's genesis state, which is `published: false` with no `info`.
 * - no `state`: `published` (whether any state is), `info` about the latest state when there is one, and `global`
 *   (the GIST root info).
 * The published states are what the test says (`publish`), as if read from the State contract.
 */
import { DID, isGenesisState } from '../../src/trust/iden3.js';
import { chainIdOfDid } from './iden3-test.js';
import { startServer, type Handler, type TestServer } from './servers.js';

const RESOLUTION = 'application/did-resolution';
const SUPPORTED = ['application/did+ld+json', 'application/did+json', RESOLUTION, '*/*'];
const ZERO = '0'.repeat(64);
/** The State contract address the resolver names (that of Polygon Amoy; only its form matters here). */
const STATE_CONTRACT = '0x1a4cC30f2aA0377b0c3bc9848766D90cb4404124';
/** A GIST root, as `global` reports it (the service does not read it). */
const GIST_ROOT = 'd9a2a2a5b3b07d9ce5b5d2a8ba2e0cf2ba6f6bb4ab80e6e2c38d8fbc04a3d81c';

interface Published {
  state: string;
  block: number;
  timestamp: number;
}

export interface TestDidResolver extends TestServer {
  /** The URL to configure as DID_RESOLVER_URL (`{url}/1.0/identifiers`). */
  readonly base: string;
  /** The Accept header of every identifiers request, in order ('' when absent). */
  readonly accepts: string[];
  /** Publishes a state of the identity (a state transition on chain): it becomes the latest (unless it already is). */
  publish(did: string, state: string): void;
  /** Forgets every published state. */
  reset(): void;
  /** While true, every request is answered 503 (the resolver or its RPC is down). */
  down: boolean;
}

/** Which representation driver-did-iden3 serves for an Accept header ('' : none, 406). */
function pickAccept(header: string | undefined): string {
  const h = (header ?? '').trim();
  if (h === '') return '*/*';
  for (const part of h.split(',')) {
    const mt = part.split(';')[0]!.trim().toLowerCase();
    if (mt !== '' && SUPPORTED.includes(mt)) return mt;
  }
  return '';
}

/** An error resolution result; the 406 one carries Go's zero time as `retrieved`, as the real one does. */
const errorResult = (type: string, message?: string, retrieved = new Date().toISOString()) => ({
  didDocument: null,
  didResolutionMetadata: {
    error: { type: `https://www.w3.org/ns/did#${type}`, ...(message ? { message } : {}) },
    contentType: RESOLUTION,
    retrieved,
  },
  didDocumentMetadata: {},
});

function genesis(did: ReturnType<typeof DID.parse>, state: string): boolean {
  try {
    return isGenesisState(did, state);
  } catch {
    return false;
  }
}

export async function startDidResolver(): Promise<TestDidResolver> {
  const history = new Map<string, Published[]>();
  let block = 1000;
  const accepts: string[] = [];

  const info = (did: string, list: Published[], i: number) => {
    const p = list[i]!;
    const next = list[i + 1];
    return {
      id: did,
      state: p.state,
      replacedByState: next?.state ?? ZERO,
      createdAtTimestamp: String(p.timestamp),
      replacedAtTimestamp: String(next?.timestamp ?? 0),
      createdAtBlock: String(p.block),
      replacedAtBlock: String(next?.block ?? 0),
    };
  };

  const handler: Handler = async (req) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!url.pathname.startsWith('/1.0/identifiers/')) return { status: 404, text: '404 page not found\n', headers: { 'content-type': 'text/plain; charset=utf-8' } };
    accepts.push(req.headers.accept ?? '');
    if (resolver.down) return { status: 503, text: '' };
    const reply = (status: number, body: unknown, type = RESOLUTION) => ({ status, text: `${JSON.stringify(body)}\n`, headers: { 'content-type': type } });

    const state = url.searchParams.get('state') ?? '';
    if (state !== '' && !/^[0-9a-fA-F]{64}$/.test(state)) return { status: 400, text: '' };
    const accept = pickAccept(url.searchParams.get('accept') ?? req.headers.accept);
    if (accept === '') return reply(406, errorResult('REPRESENTATION_NOT_SUPPORTED', undefined, '0001-01-01T00:00:00Z'));

    const did = decodeURIComponent(url.pathname.split('/').pop() ?? '');
    let parsed: ReturnType<typeof DID.parse>;
    let chainId: number;
    try {
      parsed = DID.parse(did);
      DID.idFromDID(parsed);
      chainId = chainIdOfDid(did);
    } catch (e) {
      return reply(400, errorResult('INVALID_DID', (e as Error).message));
    }

    const list = history.get(did) ?? [];
    let vmState: Record<string, unknown>;
    if (state !== '') {
      const i = list.findIndex((p) => p.state === state.toLowerCase());
      if (i < 0 && !genesis(parsed, state.toLowerCase())) return reply(404, errorResult('NOT_FOUND', 'state not found'));
      vmState = i < 0 ? { published: false } : { published: true, info: info(did, list, i) };
    } else {
      const global = {
        root: GIST_ROOT,
        replacedByRoot: ZERO,
        createdAtTimestamp: String(1_700_000_000 + block),
        replacedAtTimestamp: '0',
        createdAtBlock: String(block),
        replacedAtBlock: '0',
      };
      vmState = list.length === 0 ? { published: false, global } : { published: true, info: info(did, list, list.length - 1), global };
    }
    const document = {
      '@context': ['https://www.w3.org/ns/did/v1', 'https://schema.iden3.io/core/jsonld/auth.jsonld'],
      id: did,
      verificationMethod: [{ id: `${did}#state-info`, type: 'Iden3StateInfo2023', controller: did, stateContractAddress: `${chainId}:${STATE_CONTRACT}`, ...vmState }],
    };
    if (accept === 'application/did+ld+json') return reply(200, document, accept);
    if (accept === 'application/did+json') {
      const { '@context': _context, ...bare } = document;
      return reply(200, bare, accept);
    }
    return reply(200, {
      '@context': 'https://w3id.org/did-resolution/v1',
      didDocument: document,
      didResolutionMetadata: {
        '@context': ['https://schema.iden3.io/core/jsonld/resolution.jsonld'],
        contentType: RESOLUTION,
        retrieved: new Date().toISOString(),
        type: 'Iden3ResolutionMetadata',
      },
      didDocumentMetadata: {},
    });
  };
  const server = await startServer(handler);

  const resolver: TestDidResolver = {
    ...server,
    base: `${server.url}/1.0/identifiers`,
    accepts,
    down: false,
    publish(did, state) {
      block += 1;
      const list = history.get(did) ?? [];
      if (list.at(-1)?.state === state.toLowerCase()) return;
      list.push({ state: state.toLowerCase(), block, timestamp: 1_700_000_000 + block });
      history.set(did, list);
    },
    reset() {
      history.clear();
    },
  };
  return resolver;
}
