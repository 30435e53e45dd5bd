// @module-tag redis-server
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { SLOW_REDIS_OK, startRedis } from '../helpers/redis.ts';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { sha256 } from '../ecosystem/persisted-client.ts';

const MAX_BYTES = 8_192;
const TTL_MS = 600_000;

let redis: Awaited<ReturnType<typeof startRedis>>;
let upstream: Upstream;
let replicas: Facade[] = [];
beforeAll(async () => {
  redis = await startRedis();
  upstream = await startUpstream((req, res) => {
    res.setHeader('cache-control', 'max-age=600');
    echo(req, res);
  });
  const env = {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: SLOW_REDIS_OK,
    APQ_MAX_BYTES: String(MAX_BYTES),
    APQ_TTL_MS: String(TTL_MS),
  };
  replicas = await Promise.all([startFacade(upstream.url, env), startFacade(upstream.url, env)]);
});
afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.close()));
  await upstream?.close();
  await redis?.stop();
});

const persistedQuery = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const register = (replica: Facade, query: string) =>
  replica.postBody({ query, extensions: persistedQuery(sha256(query)) });
const byHash = (replica: Facade, query: string) =>
  replica.get(`/graphql?extensions=${encodeURIComponent(JSON.stringify(persistedQuery(sha256(query))))}`);
/** The APQ documents Redis holds, by their keys. */
const storedDocuments = async () =>
  (await redis.client.keys('pim-graphql:apq:*')).filter((key) => /:[0-9a-f]{64}$/.test(key));
const storedBytes = async () => {
  const lengths = await Promise.all((await storedDocuments()).map((key) => redis.client.strlen(key)));
  return lengths.reduce((sum, length) => sum + length, 0);
};

it('keeps the bytes of APQ documents in Redis within APQ_MAX_BYTES, evicting only the oldest documents', async () => {
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
  const kept = await storedDocuments();
  expect(kept.length).toBeGreaterThan(0);
  // The newest are kept, the oldest went first.
  expect((await byHash(replicas[0]!, docs.at(-1)!)).status).toBe(200);
  expect((await byHash(replicas[1]!, docs[0]!)).status).toBe(404);
  // Each document lives no longer than APQ_TTL_MS.
  for (const key of kept) expect(await redis.client.pttl(key)).toBeLessThanOrEqual(TTL_MS);
  expect(await redis.client.exists(cacheEntry)).toBe(1);
});

it('replaces a document registered again without counting it twice', async () => {
  const doc = `# ${'r'.repeat(3_000)}\nquery Again { __typename }`;
  for (let i = 0; i < 4; i++) expect((await register(replicas[i % 2]!, doc)).status).toBe(200);
  expect(await storedBytes()).toBeLessThanOrEqual(MAX_BYTES);
  expect((await byHash(replicas[0]!, doc)).status).toBe(200);
  // The sum Redis keeps is the sum of what it holds: eviction stays exact.
  const counted = Number(await redis.client.get('pim-graphql:apq-bytes'));
  expect(counted).toBe(await storedBytes());
});
