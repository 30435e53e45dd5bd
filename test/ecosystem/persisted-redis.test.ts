// @module-tag redis-server
import { gql, type TypedDocumentNode } from '@apollo/client';
import { beforeEach, expect, it } from 'vitest';
import type { Facade } from '../helpers/facade.ts';
import { startDemoUpstream } from '../helpers/demo.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { apolloClient, noCache, recordingFetch, sha256 } from './persisted-client.ts';

const Groups: TypedDocumentNode<{ classificationGroups: unknown }> = gql`
  query RedisGroups {
    classificationGroups(classificationId: "ECLASS-DEMO", pageSize: 1)
  }
`;
const Products: TypedDocumentNode<{ catalogProducts: unknown }> = gql`
  query RedisProducts {
    catalogProducts(catalogId: "MACHINERY", pageSize: 1)
  }
`;

// Two replicas sharing one Redis; the PIM response cache stays off so only APQ uses it.
const fleet = useRedisFleet({ upstream: startDemoUpstream, env: { PIM_CACHE: 'false', APQ_TTL_MS: '60000' } });
beforeEach(() => fleet.upstream.reset());

const query = async (replica: Facade, document: typeof Groups | typeof Products) => {
  const sent = recordingFetch();
  const result = await apolloClient(replica.url, sent.fetch).query({ query: document, ...noCache });
  return { result, sent: sent.sent.map(({ method, hasQuery }) => [method, hasQuery]), hash: sent.sent[0]!.hash! };
};

it('shares APQ documents between replicas through Redis, each with a TTL', async () => {
  const { redis, upstream, replicas } = fleet;
  const first = await query(replicas[0]!, Groups);
  expect(first.result.error).toBeUndefined();
  expect(first.sent).toEqual([
    ['GET', false],
    ['POST', true],
  ]);
  const ttl = await redis.client.pttl(`pim-graphql:apq:${first.hash}`);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(60_000);
  expect(await redis.client.get(`pim-graphql:apq:${first.hash}`)).toSatisfy(
    (doc: string) => sha256(doc) === first.hash,
  );

  // The other replica never saw the document, yet the hash alone is enough there.
  const second = await query(replicas[1]!, Groups);
  expect(second.result.data).toEqual(first.result.data);
  expect(second.sent).toEqual([['GET', false]]);
  expect(upstream.requests).toHaveLength(2);
});

it('answers a miss at once while Redis is down, so clients fall back to sending the document', async () => {
  const { redis, upstream, replicas } = fleet;
  await redis.stop();
  const started = Date.now();
  for (const document of [Groups, Products]) {
    const { result, sent } = await query(replicas[1]!, document);
    expect(result.error).toBeUndefined();
    expect(sent).toEqual([
      ['GET', false],
      ['POST', true],
    ]);
  }
  // No wait for Redis: far below the test's own timeout, with a wide margin for a loaded machine.
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(upstream.requests).toHaveLength(2);
});
