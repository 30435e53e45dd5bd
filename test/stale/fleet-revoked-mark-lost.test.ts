// @module-tag redis-server
import { expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

// docs/operations.md (Stale answers): "with Redis, the 401 of a key that kept copies anywhere in the fleet is recorded
// there, as long as those copies may stand in ... and every instance reads that record". The record was written only
// while the key's `keeper:` mark lived in Redis (or the replica that heard the 401 held copies itself). Redis lost the
// mark (FLUSHALL, a restart with no persistence, a failover to a replica behind): the replica that wrote it takes it
// as written for 10 minutes (revocations.ts MARK_AGAIN_MS), so a 401 heard by another replica was recorded nowhere,
// and the replica holding the revoked key's copy in memory served it at the next outage. The same loss for a URL's
// 404 was handled already (fleet-verdict-copy-gone-from-redis.test.ts).
const fleet = useRedisFleet({
  upstream: () => startUpstream(answerFor('v1')),
  env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false' },
});
const A = { 'x-api-key': 'key-of-a-123' };
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;
const revoked = faults.status(401, '{"status":401,"meta":{},"error":"API key revoked"}');

it('Redis restarted empty (FLUSHALL): a 401 heard by one replica still ends the key’s copies another holds', async () => {
  const { upstream, replicas, redis } = fleet;
  const [heard, other] = [replicas[0]!, replicas[1]!];
  await untilConnected(redis, 4);
  expect((await other.post(products('R1'), {}, A)).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('*:keeper:*')).length).toBe(1);
  await redis.client.flushall();
  // The replica keeps reading with the key after Redis came back empty: its copies are stored in Redis again.
  expect((await other.post(products('R2'), {}, A)).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('*:lkg:*')).length).toBe(1);

  upstream.respond(revoked);
  expect((await heard.post(products('R3'), {}, A)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  // The record is written after the answer, with no mark to go by: in the family of those heard with none.
  await expect.poll(async () => (await redis.client.keys('*:revoked-unmarked:*')).length).toBe(1);
  upstream.respond(faults.status(503));
  const there = (await other.post(products('R1'), {}, A)).body;
  expect(
    there.extensions?.stale,
    `the revoked key's copy served; Redis holds ${JSON.stringify(await redis.client.keys('*'))}`,
  ).toBeUndefined();
});
