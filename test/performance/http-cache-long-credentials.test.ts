import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach, type Facade } from '../helpers/facade.ts';
import { heldByCache } from '../helpers/heap.ts';

const servers = closedAfterEach();

// A PIM that answers every key (as it answers any `Authorization` a caller makes up), small answers fresh ten minutes,
// each a variant of the key sent.
const answer = (req: IncomingMessage, res: ServerResponse) =>
  res
    .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600', vary: 'x-api-key' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url }] }));

const MAX = 4 * 2 ** 20;
const env = (cache: string) => ({
  PIM_CACHE: cache,
  PIM_CACHE_MAX_BYTES: String(MAX),
  // Only the HTTP cache holds answers (as in http-cache-heap-bound.test.ts).
  PIM_STALE_IF_ERROR_MS: '0',
  RESPONSE_CACHE_MAX_BYTES: '0',
});
const query = '{ catalogProducts(catalogId: "C1") }';
// Keys of 14,000 characters, under the default HTTP_MAX_HEADER_BYTES (16 KiB), each one its own.
const key = (i: number) => `${i}-`.padEnd(14_000, 'k');
const read = async (facade: Facade, from: number, count: number) => {
  for (let i = from; i < from + count; i += 10) {
    const batch = Array.from({ length: 10 }, (_, j) => facade.post(query, undefined, { 'x-api-key': key(i + j) }));
    for (const { status } of await Promise.all(batch)) expect(status).toBe(200);
  }
};

// docs/configuration.md: PIM_CACHE_MAX_BYTES bounds each in-process cache copy, the keys and headers each answer keeps
// included. undici's memory store keeps the request's headers in each entry, and its Vary values besides: with a
// credential of 14 KB in each, 4.95 MiB of heap in a bound of 4 (more than the 341 entries the bound's count allows are
// read).
it('answers kept for long credentials stay within PIM_CACHE_MAX_BYTES of heap', async () => {
  const off = (await servers.start(answer, env('false'))).facade;
  const on = (await servers.start(answer, env('true'))).facade;
  const held = await heldByCache(read, { off, on }, { count: 400, warm: { off: 100, on: 10 } });
  expect(held, 'MiB of heap the in-process HTTP cache holds').toBeLessThanOrEqual(MAX / 2 ** 20);
}, 120_000);
