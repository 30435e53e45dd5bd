// @module-tag redis-server
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createRevocations } from '../../src/pim/cache/revocations.ts';
import { startRedis } from '../helpers/redis.ts';

// "A record only moves later" (Revocations.refused), for the records of verdicts heard with no copy in Redis too: two
// verdicts on one URL whose writes interleave (the earlier one's landing last) must leave the later time, or a third
// replica reads a record older than the latest verdict and serves a copy it ended.
let redis: Awaited<ReturnType<typeof startRedis>>;
let connection: Redis;
beforeAll(async () => {
  redis = await startRedis();
  connection = new Redis(redis.url, { keyPrefix: 'pim-graphql:' });
});
afterAll(async () => {
  connection.disconnect();
  await redis.stop();
});

const verdicts = () =>
  createRevocations({
    shared: { redis: connection, within: (command) => command() },
    recordMs: 86_400_000,
    redisMaxBytes: 65_536,
    clockMarginMs: 5_000,
    onError: (error) => {
      throw error;
    },
    family: { record: 'ended', markOf: (name) => `lkg:${name}` },
  });

it('keeps the later of two verdicts heard with no copy in Redis', async () => {
  const [later, earlier, reader] = [verdicts(), verdicts(), verdicts()];
  const t = Date.now();
  const now = vi.spyOn(Date, 'now');
  now.mockReturnValue(t + 10_000);
  later.refused('partition /groups/G', false);
  now.mockReturnValue(t);
  earlier.refused('partition /groups/G', false);
  now.mockRestore();
  await expect.poll(() => connection.exists('ended-unmarked:partition /groups/G')).toBe(1);
  await new Promise((r) => setTimeout(r, 200));
  expect(await reader.inFleet('partition /groups/G')).toBe(t + 10_000 + 5_000);
});
