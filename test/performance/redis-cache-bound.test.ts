// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';

const KiB = 1_024;
const BOUND = 128 * KiB;
// Each page a distinct URL, about 8 KB, fresh for ten minutes.
const padded = (req: IncomingMessage, res: ServerResponse) =>
  res
    .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, pad: 'x'.repeat(8_192) }] }));

const fleet = useRedisFleet({
  upstream: () => startUpstream(padded),
  env: { PIM_CACHE_REDIS_MAX_BYTES: String(BOUND), PIM_STALE_IF_ERROR_MS: '0' },
});

// What the HTTP cache's hashes hold: their variants' bytes.
const stored = async () => {
  const { client } = fleet.redis;
  let bytes = 0;
  for (const key of await client.keys('pim-graphql:http-cache:*')) {
    for (const field of await client.hkeys(key)) bytes += await client.hstrlen(key, field);
  }
  return bytes;
};

const page = (n: number) => `{ catalogProducts(catalogId: "C", page: ${n}) }`;

// PIM_CACHE_MAX_BYTES bounds the in-process store only: with REDIS_URL, every page any caller read stayed in Redis for
// as long as its answer said, however many.
it('keeps the HTTP cache in Redis within PIM_CACHE_REDIS_MAX_BYTES across replicas, the soonest to expire going first', async () => {
  const { replicas, upstream } = fleet;
  for (let n = 0; n < 60; n++) {
    expect((await replicas[n % 2]!.post(page(n), {}, { 'x-api-key': 'k' })).body.errors).toBeUndefined();
  }
  // The writes land after the answers: wait until what Redis holds stops changing.
  let last = -1;
  await expect
    .poll(async () => {
      const [before, now] = [last, (last = await stored())];
      return now > 0 && now === before;
    })
    .toBe(true);
  expect(last).toBeLessThanOrEqual(BOUND);
  // The newest pages stayed: the other replica answers the last one from Redis.
  upstream.reset();
  expect((await replicas[0]!.post(page(59), {}, { 'x-api-key': 'k' })).body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(0);
});
