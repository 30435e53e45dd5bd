// @module-tag redis-server
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createInvalidations, MAX_INVALIDATED_TAGS } from '../../src/pim/cache/invalidations.ts';
import { closeRedis, createRedis, replyWithin } from '../../src/redis.ts';
import { startRedis } from '../helpers/redis.ts';

let redis: Awaited<ReturnType<typeof startRedis>>;
beforeAll(async () => void (redis = await startRedis()));
afterAll(() => redis.stop());

// During a rolling deploy the other replicas' older version writes the record without folding it: a record of
// more tags than the bound, none of them `all`. Read every poll, it refilled the folded map, which folded again and
// flushed this replica's caches each second.
it('reads a record past its bound once: later polls change nothing', async () => {
  const fields = Array.from({ length: MAX_INVALIDATED_TAGS + 500 }, (_, i) => [`catalog:C${i}`, String(1_000_000 + i)]);
  await redis.client.hset('pim-graphql:invalidated', Object.fromEntries(fields));
  const connection = createRedis(redis.url, () => undefined, 1_000);
  let changes = 0;
  const invalidations = createInvalidations({
    shared: { redis: connection, within: replyWithin(2_000) },
    pollMs: 20,
    onChange: () => void changes++,
    onError: () => undefined,
  });
  try {
    await expect.poll(() => changes).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(changes).toBe(1);
    // Folded, no invalidation is lost: each tag's path counts as invalidated at least when the record says.
    for (const i of [0, 700, MAX_INVALIDATED_TAGS + 499]) {
      const path = `/pxm/pimapi/v1/catalogs/C${i}/products/search`;
      expect(invalidations.since(path)).toBeGreaterThanOrEqual(1_000_000 + i);
    }
  } finally {
    invalidations.close();
    await closeRedis(connection);
  }
});
