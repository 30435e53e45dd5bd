import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach, type Facade } from '../helpers/facade.ts';
import { heldByCache } from '../helpers/heap.ts';

const servers = closedAfterEach();

// Answers of some 4 KB, each fresh ten minutes: as many as the bound's count lets the in-process HTTP cache hold.
const answer = (req: IncomingMessage, res: ServerResponse) =>
  res
    .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, text: 'x'.repeat(3_900) }] }));

const MAX = 8 * 2 ** 20;
const env = (cache: string) => ({
  PIM_CACHE: cache,
  PIM_CACHE_MAX_BYTES: String(MAX),
  // Only the HTTP cache holds answers: no last-known-good copies, no cache of results, and no hit reads one again
  // (the parsed answers are kept on hits only).
  PIM_STALE_IF_ERROR_MS: '0',
  RESPONSE_CACHE_MAX_BYTES: '0',
});
const query = 'query($c: ID!) { catalogProducts(catalogId: $c) }';
const read = async (facade: Facade, from: number, count: number) => {
  for (let i = from; i < from + count; i += 25)
    await Promise.all(Array.from({ length: 25 }, (_, j) => facade.post(query, { c: `C${i + j}` })));
};

// docs/configuration.md: PIM_CACHE_MAX_BYTES bounds each in-process cache copy. undici's store counts the bodies
// alone, and one answer per 4 KiB of the bound kept some 2.4 KB of keys and headers each besides: 8 MiB of 4 KB
// answers took 12.5 MiB of heap.
it('the in-process HTTP cache full of 4 KB answers stays within PIM_CACHE_MAX_BYTES of heap', async () => {
  const off = (await servers.start(answer, env('false'))).facade;
  const on = (await servers.start(answer, env('true'))).facade;
  // 2,000 answers: the one that caches holds them all (under the count of 2,048, 8 MB under its bytes).
  const held = await heldByCache(read, { off, on }, { count: 2_000, warm: { off: 300, on: 25 } });
  expect(held, 'MiB of heap the in-process HTTP cache holds').toBeLessThanOrEqual(MAX / 2 ** 20);
}, 120_000);
