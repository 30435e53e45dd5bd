import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { closedAfterEach, type Facade } from '../helpers/facade.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const servers = closedAfterEach();
const heap = async () => {
  for (let i = 0; i < 4; i++) (gc(), await sleep(20));
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
};

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
  // Warm both (compiled code, pools, the document), then each reads 2,000 answers it has not read: the one that
  // caches holds them all (2,000 under the count of 2,048, 8 MB under its bytes).
  await read(off, 100_000, 300);
  await read(on, 100_000, 25);
  let start = await heap();
  await read(off, 0, 2_000);
  const without = (await heap()) - start;
  start = await heap();
  await read(on, 0, 2_000);
  const withCache = (await heap()) - start;
  const held = withCache - without;
  console.log({ without, withCache, held: held / 2 ** 20 });
  expect(held / 2 ** 20, 'MiB of heap the in-process HTTP cache holds').toBeLessThanOrEqual(MAX / 2 ** 20);
}, 120_000);
