import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach, useFacade } from '../helpers/facade.ts';

// One catalog page of about 100 KB, with caching headers, so repeats can also come from the caches.
const page = JSON.stringify({ status: 200, meta: {}, data: [{ text: 'x'.repeat(100_000) }] });
const answer = (_req: unknown, res: ServerResponse) =>
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(page);

// A request may read 1 MiB of catalog data, so it may send about ten of these pages, however it asks for them.
const fixture = useFacade({ PIM_MAX_REQUEST_BYTES: '1048576' }, answer);
const servers = closedAfterEach();

/** Sends one operation and returns the status, the response's size and its errors' codes. */
async function send(query: string, variables?: Record<string, unknown>) {
  const { status, text, body } = await fixture.facade.post(query, variables);
  const codes = (body?.errors ?? []).map((error: { extensions?: { code?: string } }) => error.extensions?.code);
  return { status, size: text.length, codes: codes as string[] };
}

// A few KB of query once repeated one upstream answer 1,500 times in the response (375 MB of 250 KB pages),
// and the process ran out of heap writing it: one call, so neither the call cap nor the read cap saw it.
describe('an answer repeated in one response counts each time it is sent', () => {
  it('through entity representations: 100 copies of one catalog', async () => {
    const representations = Array.from({ length: 100 }, () => ({ __typename: 'Catalog', catalogId: 'C' }));
    const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Catalog { products } } }';
    const { status, size, codes } = await send(query, { r: representations });
    expect(status).toBe(200);
    expect(fixture.upstream.requests).toHaveLength(1);
    expect(size).toBeLessThan(1.2 * 2 ** 20);
    expect(codes.length).toBeGreaterThan(85);
    expect(new Set(codes)).toEqual(new Set(['UPSTREAM_TOO_LARGE']));
  });

  it('through aliases of one field', async () => {
    const aliases = Array.from({ length: 15 }, (_, i) => `a${i}: catalogProducts(catalogId: "C")`).join(' ');
    const { size, codes } = await send(`{ ${aliases} }`);
    expect(size).toBeLessThan(1.2 * 2 ** 20);
    expect(codes).toEqual(Array.from({ length: 5 }, () => 'UPSTREAM_TOO_LARGE'));
  });

  it('toward the bytes the process holds at once, too', async () => {
    const { facade } = await servers.start(answer, {
      PIM_MAX_REQUEST_BYTES: String(4 * 2 ** 20),
      PIM_MAX_INFLIGHT_BYTES: '1048576',
      // The process cap alone: one credential may hold all of it.
      PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: '1048576',
    });
    const aliases = Array.from({ length: 15 }, (_, i) => `a${i}: catalogProducts(catalogId: "C")`).join(' ');
    const { text, body } = await facade.post(`{ ${aliases} }`);
    expect(text.length).toBeLessThan(1.2 * 2 ** 20);
    // The request alone passes what the process (here also its credential) may hold: no retry would help.
    const alone =
      "The catalog answers of this request exceed 1048576 bytes, the most its credential's requests may hold at once";
    expect(body.errors.map((error: { message: string }) => error.message)).toEqual(
      Array.from({ length: 5 }, () => alone),
    );
  });

  it('while a request that sends each answer once is unchanged', async () => {
    const { status, codes } = await send('{ a: catalogProducts(catalogId: "C") b: catalogProducts(catalogId: "D") }');
    expect(status).toBe(200);
    expect(codes).toEqual([]);
  });
});

// The count was of UTF-16 units, so text outside ASCII (2-3 bytes each in UTF-8) went out at up to 3x the cap.
describe('what an answer costs to send is its size in bytes', () => {
  it('for text outside ASCII too', async () => {
    const accented = JSON.stringify({ status: 200, meta: {}, data: [{ text: 'é'.repeat(100_000) }] });
    const { facade } = await servers.start(
      (_req: unknown, res: ServerResponse) =>
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(accented),
      { PIM_MAX_REQUEST_BYTES: '1048576' },
    );
    const aliases = Array.from({ length: 15 }, (_, i) => `a${i}: catalogProducts(catalogId: "C")`).join(' ');
    const { text, body } = await facade.post(`{ ${aliases} }`);
    // 200 KB each: five fit in 1 MiB.
    expect(Buffer.byteLength(text)).toBeLessThan(1.2 * 2 ** 20);
    expect(body.errors.map((error: { extensions: { code: string } }) => error.extensions.code)).toEqual(
      Array.from({ length: 10 }, () => 'UPSTREAM_TOO_LARGE'),
    );
  });
});
