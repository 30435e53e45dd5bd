import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import { setImmediate as tick } from 'node:timers/promises';
import { afterEach, expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/operations.md, Memory bounds: "all requests not yet answered [hold] at most PIM_MAX_INFLIGHT_BYTES together
// ... A body that announces its length holds all of it from its headers on, until it is read or cut".
//
// A coalesced call reads its body into the byte account of the request that started it. When that request's client
// leaves while another request still waits on the call, the call goes on (as it should: the joiner wants it), but
// the first request's account was released at its `close`, and a released account counts nothing any more
// (byte-limits.ts hold(): `if (!open) return`). The body is then read outside every cap: the process cap, the
// credential share, and it is read whole instead of being refused at its headers. Once counted while read, it still
// counted in part or not at all when that request had sent more than it read (one answer under eight aliases: read
// once, sent eight times): the released account kept the larger as its base.

const CAP = 1_048_576;
const PAGE = 700_000;
const SMALL = 100_000;

const servers = closedAfterEach();
let held: ServerResponse | undefined;
afterEach(() => held?.destroy());

function page(bytes: number) {
  const head = '{"status":200,"meta":{},"data":[{"pad":"';
  const tail = '"}]}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

/** The PIM: `shared` waits for `release()`, then sends its headers (700 KB declared) and a first part only. */
function pim() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const handler = (req: { url?: string }, res: ServerResponse) => {
    if (req.url!.includes('/catalogs/shared/')) {
      held = res;
      void released.then(() => {
        const body = page(PAGE);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(PAGE) });
        res.write(body.slice(0, 1_000));
      });
      return;
    }
    const size = req.url!.includes('/catalogs/other/') ? PAGE : req.url!.includes('/catalogs/small/') ? SMALL : 100;
    const body = page(size);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
  };
  return { handler, release };
}

/** Resolves once undici has the headers of the upstream call to `path`, and the caller has charged them. */
function headersRead(path: string) {
  return new Promise<void>((resolve) => {
    const onHeaders = (message: unknown) => {
      const { request } = message as { request: { path: string } };
      if (!request.path.includes(path)) return;
      unsubscribe('undici:request:headers', onHeaders);
      // The charge of the declared length runs in the microtasks after undici's callback.
      void tick()
        .then(() => tick())
        .then(() => resolve());
    };
    subscribe('undici:request:headers', onHeaders);
  });
}

const env = {
  PIM_MAX_INFLIGHT_BYTES: String(CAP),
  PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: String(CAP),
  PIM_CACHE: 'false',
  PIM_RETRIES: '0',
  PIM_TIMEOUT_MS: '20000',
};

type First = 'stays' | 'leaves' | 'leaves, having sent more than it read';

async function scenario(first: First) {
  const { handler, release } = pim();
  const { facade, upstream } = await servers.start(handler, env);
  const post = (query: string, key: string, signal?: AbortSignal, accept = 'application/json') =>
    fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, accept },
      body: JSON.stringify({ query }),
      signal,
    });
  // The PIM has answered the key: both requests wait in its own queue share, so request 2 may join request 1's call (a
  // key the PIM had not accepted when request 1 began waits in another share, which a request made since does not join).
  await (await post('{ catalogProducts(catalogId: "warm") }', 'key-a')).text();
  // Request 1 starts the shared call (after one 100 KB answer sent under eight aliases, read once, in the third
  // case); request 2 (same key) joins it: its other field reaches the PIM only once its load of `shared` went through
  // coalescing (one DataLoader batch), and no second `shared` call goes out.
  const leaver = new AbortController();
  let one: Promise<unknown>;
  if (first === 'leaves, having sent more than it read') {
    const aliases = Array.from({ length: 8 }, (_, i) => `a${i}: catalogProducts(catalogId: "small")`).join(' ');
    const query = `{ ${aliases} ... @defer { s: catalogProducts(catalogId: "shared") } }`;
    const reader = (await post(query, 'key-a', leaver.signal, 'multipart/mixed')).body!.getReader();
    // Its first part is out: the eight answers were sent (800 KB counted, 100 KB read).
    let text = '';
    while (!text.includes('"a7"')) text += new TextDecoder().decode((await reader.read()).value);
    one = reader.read().catch(() => undefined);
  } else {
    one = post('{ catalogProducts(catalogId: "shared") }', 'key-a', leaver.signal).catch(() => undefined);
  }
  await vi.waitFor(() => expect(upstream.requests.some((r) => r.url.includes('/shared/'))).toBe(true));
  const two = post('{ s: catalogProducts(catalogId: "shared") m: catalogProducts(catalogId: "mark") }', 'key-a');
  await vi.waitFor(() => expect(upstream.requests.some((r) => r.url.includes('/mark/'))).toBe(true));
  expect(upstream.requests.filter((r) => r.url.includes('/shared/'))).toHaveLength(1);
  if (first !== 'stays') {
    leaver.abort();
    await one;
    // The façade has seen request 1 go (its field ended, counted as a disconnect).
    await vi.waitFor(async () => {
      const metrics = await (await fetch(`${facade.origin}/metrics`)).text();
      expect(metrics).toMatch(/^graphql_client_disconnects_total 1$/m);
    });
  }
  // The PIM answers the shared call: 700 KB announced, held from its headers on for request 2.
  const read = headersRead('/catalogs/shared/');
  release();
  await read;
  // Another credential's 700 KB page cannot fit beside it in the 1 MiB the process may hold.
  const other = (await (await post('{ catalogProducts(catalogId: "other") }', 'key-b')).json()) as {
    errors?: Array<{ message: string; extensions: { code: string } }>;
  };
  held?.end(page(PAGE).slice(1_000));
  await (await two).text();
  return other;
}

// Another credential's 700 KB page cannot fit beside the shared body in the 1 MiB the process may hold.
it.each<First>(['stays', 'leaves', 'leaves, having sent more than it read'])(
  'a shared body counts while read for a joined request: the request that started it %s',
  async (first) => {
    const other = await scenario(first);
    expect(other.errors?.[0]?.extensions.code).toBe('UPSTREAM_TOO_LARGE');
  },
  20_000,
);
