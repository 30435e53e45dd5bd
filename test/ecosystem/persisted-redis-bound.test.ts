// @module-tag redis-server
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { byHash, register, storedDocuments } from './persisted-client.ts';

// The PIM response cache stays off so only APQ uses Redis.
const fleet = useRedisFleet({
  upstream: () => startUpstream(),
  env: { PIM_CACHE: 'false', APQ_MAX_DOCUMENTS: '3', APQ_MAX_BYTES: '1024' },
});

it('keeps at most APQ_MAX_DOCUMENTS documents in Redis across replicas, the oldest going first', async () => {
  const { redis, upstream, replicas } = fleet;
  const stored = () => storedDocuments(redis.client);
  const docs = Array.from({ length: 8 }, (_, i) => `query D${i} { __typename }`);
  for (const [i, doc] of docs.entries()) {
    expect((await register(replicas[i % 2]!, doc)).status).toBe(200);
    expect((await stored()).length).toBeLessThanOrEqual(3);
  }
  expect(await stored()).toHaveLength(3);
  for (const doc of docs.slice(0, 5)) expect((await byHash(replicas[0]!, doc)).status).toBe(404);
  for (const doc of docs.slice(5)) expect((await byHash(replicas[1]!, doc)).status).toBe(200);

  // Over the per-document bound (a comment makes it long without tokens): executed, never stored.
  const big = `# ${'x'.repeat(1_100)}\nquery Big { __typename }`;
  expect((await register(replicas[0]!, big)).status).toBe(200);
  expect((await byHash(replicas[1]!, big)).status).toBe(404);
  expect(await stored()).toHaveLength(3);
  expect(upstream.requests).toHaveLength(0);
});
