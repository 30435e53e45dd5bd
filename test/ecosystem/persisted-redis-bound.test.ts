// @module-tag redis-server
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { SLOW_REDIS_OK, startRedis } from '../helpers/redis.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { sha256 } from './persisted-client.ts';

let redis: Awaited<ReturnType<typeof startRedis>>;
let upstream: Upstream;
let replicas: Facade[] = [];
beforeAll(async () => {
  redis = await startRedis();
  upstream = await startUpstream();
  const env = {
    PIM_CACHE: 'false',
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: SLOW_REDIS_OK,
    APQ_MAX_DOCUMENTS: '3',
    APQ_MAX_BYTES: '1024',
  };
  replicas = await Promise.all([startFacade(upstream.url, env), startFacade(upstream.url, env)]);
});
afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.close()));
  await upstream?.close();
  await redis?.stop();
});

const persistedQuery = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
/** A POST registering a document under its hash, as a client does after a miss. */
const register = (replica: Facade, query: string) =>
  replica.postBody({ query, extensions: persistedQuery(sha256(query)) });
/** A GET naming a document by its hash only. */
const byHash = (replica: Facade, query: string) =>
  replica.get(`/graphql?extensions=${encodeURIComponent(JSON.stringify(persistedQuery(sha256(query))))}`);
/** The APQ documents Redis holds, by their keys. */
const storedDocuments = async () =>
  (await redis.client.keys('pim-graphql:apq:*')).filter((key) => /:[0-9a-f]{64}$/.test(key));

it('keeps at most APQ_MAX_DOCUMENTS documents in Redis across replicas, the oldest going first', async () => {
  const docs = Array.from({ length: 8 }, (_, i) => `query D${i} { __typename }`);
  for (const [i, doc] of docs.entries()) {
    expect((await register(replicas[i % 2]!, doc)).status).toBe(200);
    expect((await storedDocuments()).length).toBeLessThanOrEqual(3);
  }
  expect(await storedDocuments()).toHaveLength(3);
  for (const doc of docs.slice(0, 5)) expect((await byHash(replicas[0]!, doc)).status).toBe(404);
  for (const doc of docs.slice(5)) expect((await byHash(replicas[1]!, doc)).status).toBe(200);

  // Over the per-document bound (a comment makes it long without tokens): executed, never stored.
  const big = `# ${'x'.repeat(1_100)}\nquery Big { __typename }`;
  expect((await register(replicas[0]!, big)).status).toBe(200);
  expect((await byHash(replicas[1]!, big)).status).toBe(404);
  expect(await storedDocuments()).toHaveLength(3);
  expect(upstream.requests).toHaveLength(0);
});
