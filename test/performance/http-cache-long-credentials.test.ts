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
// included. undici's memory store keeps the request's headers in each entry, and its Vary values besides: a
// credential of 14 KB was held twice in each, some 10 MiB of heap in a bound of 4.
it('answers kept for long credentials stay within PIM_CACHE_MAX_BYTES of heap', async () => {
  const off = (await servers.start(answer, env('false'))).facade;
  const on = (await servers.start(answer, env('true'))).facade;
  await read(off, 100_000, 100);
  await read(on, 100_000, 10);
  let start = await heap();
  await read(off, 0, 400);
  const without = (await heap()) - start;
  start = await heap();
  // More than the 341 entries the bound's count lets it hold.
  await read(on, 0, 400);
  const withCache = (await heap()) - start;
  const held = withCache - without;
  console.log({ without, withCache, held: held / 2 ** 20 });
  expect(held / 2 ** 20, 'MiB of heap the in-process HTTP cache holds').toBeLessThanOrEqual(MAX / 2 ** 20);
}, 120_000);
