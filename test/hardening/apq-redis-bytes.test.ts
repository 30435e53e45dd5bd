// @module-tag redis-server
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { cacheableEcho, startUpstream } from '../helpers/upstream.ts';
import { byHash, register, storedDocuments } from '../ecosystem/persisted-client.ts';

const MAX_BYTES = 8_192;
const TTL_MS = 600_000;

const fleet = useRedisFleet({
  upstream: () => startUpstream(cacheableEcho(600)),
  env: { APQ_MAX_BYTES: String(MAX_BYTES), APQ_TTL_MS: String(TTL_MS) },
});

const storedBytes = async () => {
  const { client } = fleet.redis;
  const lengths = await Promise.all((await storedDocuments(client)).map((key) => client.strlen(key)));
  return lengths.reduce((sum, length) => sum + length, 0);
};

it('keeps the bytes of APQ documents in Redis within APQ_MAX_BYTES, evicting only the oldest documents', async () => {
  const { redis, replicas } = fleet;
  // A cached upstream answer, which no registration may evict.
  expect((await replicas[0]!.post('{ catalogProducts(catalogId: "kept") }')).body.errors).toBeUndefined();
  await expect.poll(() => redis.client.keys('pim-graphql:http-cache:*')).toHaveLength(1);
  const cacheEntry = (await redis.client.keys('pim-graphql:http-cache:*'))[0]!;

  // Documents of about 3 KB each (a comment makes them long without tokens): two fit, three do not.
  const docs = Array.from({ length: 12 }, (_, i) => `# ${String(i).repeat(3_000)}\nquery Big${i} { __typename }`);
  for (const [i, doc] of docs.entries()) {
    expect((await register(replicas[i % 2]!, doc)).status).toBe(200);
    expect(await storedBytes()).toBeLessThanOrEqual(MAX_BYTES);
  }
  const kept = await storedDocuments(redis.client);
  expect(kept.length).toBeGreaterThan(0);
  // The newest are kept, the oldest went first.
  expect((await byHash(replicas[0]!, docs.at(-1)!)).status).toBe(200);
  expect((await byHash(replicas[1]!, docs[0]!)).status).toBe(404);
  // Each document lives no longer than APQ_TTL_MS.
  for (const key of kept) expect(await redis.client.pttl(key)).toBeLessThanOrEqual(TTL_MS);
  expect(await redis.client.exists(cacheEntry)).toBe(1);
});

it('replaces a document registered again without counting it twice', async () => {
  const { redis, replicas } = fleet;
  const doc = `# ${'r'.repeat(3_000)}\nquery Again { __typename }`;
  for (let i = 0; i < 4; i++) expect((await register(replicas[i % 2]!, doc)).status).toBe(200);
  expect(await storedBytes()).toBeLessThanOrEqual(MAX_BYTES);
  expect((await byHash(replicas[0]!, doc)).status).toBe(200);
  // The sum Redis keeps is the sum of what it holds: eviction stays exact.
  const counted = Number(await redis.client.get('pim-graphql:apq-bytes'));
  expect(counted).toBe(await storedBytes());
});
