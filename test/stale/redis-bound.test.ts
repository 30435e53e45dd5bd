// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';

const KiB = 1_024;
// Each page a distinct URL the PIM answers 2xx, about 8 KB: kept for a day by default.
const padded = (req: IncomingMessage, res: ServerResponse) =>
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, pad: 'x'.repeat(8_192) }] }));

const fleet = useRedisFleet({
  upstream: () => startUpstream(padded),
  env: { PIM_CACHE: 'false', PIM_STALE_REDIS_MAX_BYTES: String(64 * KiB) },
  replicas: 1,
});

const stored = async () => {
  const keys = await fleet.redis.client.keys('pim-graphql:lkg:*');
  let bytes = 0;
  for (const key of keys) bytes += await fleet.redis.client.strlen(key);
  return { keys: keys.length, bytes };
};

// Any caller could read page after page, each a copy in Redis for PIM_STALE_IF_ERROR_MS: Redis grew without bound.
it('keeps the last-known-good copies in Redis within PIM_STALE_REDIS_MAX_BYTES, the soonest to expire going first', async () => {
  const [facade] = fleet.replicas;
  for (let batch = 0; batch < 4; batch++) {
    const fields = Array.from(
      { length: 10 },
      (_, i) => `p${i}: catalogProducts(catalogId: "C", page: ${batch * 10 + i})`,
    );
    expect((await facade!.post(`{ ${fields.join(' ')} }`)).body.errors).toBeUndefined();
  }
  // The copies are written after the answers go out: poll until the last one is in, then check the bound.
  await expect
    .poll(async () => (await fleet.redis.client.keys('pim-graphql:lkg:*')).some((k) => k.includes('page=39')))
    .toBe(true);
  const { keys, bytes } = await stored();
  expect(bytes).toBeLessThanOrEqual(64 * KiB);
  // Not emptied either: as many 8 KB copies as the bound holds.
  expect(keys).toBeGreaterThanOrEqual(6);
});
