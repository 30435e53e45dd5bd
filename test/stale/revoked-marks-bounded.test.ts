// @module-tag redis-server
import { afterEach, expect, it, vi } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { untilConnected } from '../helpers/redis.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

// A credential's copy keeps a `keeper:` mark in Redis, one per key (whatever Authorization rides along with it): a PIM
// that takes a key per user, each request a new one, makes a mark of each. The copies stay within
// PIM_STALE_REDIS_MAX_BYTES; the marks were outside any bound, a day each (review of cda2f86: 3,000 marks for 92
// copies).
const fleet = useRedisFleet({
  upstream: () => startUpstream(answerFor('v1')),
  env: { PIM_STALE_REDIS_MAX_BYTES: String(64 * 1_024) },
  replicas: 1,
});

it(
  'the marks of keys that kept copies stay bounded in Redis, whatever the partitions',
  { timeout: 60_000 },
  async () => {
    const { replicas, redis } = fleet;
    await untilConnected(redis, 2);
    let sent = 0;
    const one = async () => {
      while (sent < 3_000) {
        const headers = { 'x-api-key': `key-of-user-${sent++}` };
        await replicas[0]!.post('{ p: catalogProducts(catalogId: "C") }', {}, headers);
      }
    };
    await Promise.all(Array.from({ length: 16 }, one));
    // Every mark written: each the same size, some 330 bytes as the bound counts them, within 64 KiB.
    await expect.poll(async () => (await redis.client.keys('*keeper:*')).length).toBeGreaterThan(100);
    expect((await redis.client.keys('*keeper:*')).length).toBeLessThanOrEqual(Math.ceil(65_536 / 300));
  },
);

afterEach(() => void vi.useRealTimers());

// Written again every ten minutes, a mark's lifetime grew by half a day each time it was (review of 6f35ab0: 65 days
// after a day of copies), and a 401's record lasts as long as the mark.
it('a key that keeps copies all day has a mark of a day and a half at most', async () => {
  const { replicas, redis } = fleet;
  await untilConnected(redis, 2);
  const key = { 'x-api-key': 'key-of-a-busy-one' };
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  for (let i = 0; i < 12; i++) {
    await replicas[0]!.post(`{ p: catalogProducts(catalogId: "busy-${i}") }`, {}, key);
    vi.setSystemTime(Date.now() + 11 * 60_000);
  }
  const marks = await redis.client.keys('*keeper:*');
  const ttls = await Promise.all(marks.map((name) => redis.client.pttl(name)));
  expect(Math.max(...ttls)).toBeLessThanOrEqual(1.5 * 86_400_000 + 60_000);
});
