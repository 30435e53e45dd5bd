// @module-tag redis-server
import { expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

// 3e0f1b1 put `failedAt` in createRevocations, which both families share: after one failed read of any record, no
// other name's record is read for a second, and 0 ("none in the fleet") is taken in its place. For the 401s that was
// no regression to fix (each key's read is held a second already; keys are few), and a single slow reply (an event
// loop or Redis stalled past REDIS_TIMEOUT_MS, Redis answering again at once) now lets every revoked key's copies stand
// in on the replicas that did not hear the 401, for that second, while Redis holds the record and answers.
const fleet = useRedisFleet({
  upstream: () => startUpstream(answerFor('v1')),
  env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false', REDIS_TIMEOUT_MS: '300' },
});
const K = { 'x-api-key': 'key-of-a-123' };
const L = { 'x-api-key': 'key-of-b-456' };
const products = (id: string) => `{ p: catalogProducts(catalogId: "${id}") }`;

it('one failed read of another key’s record does not let a revoked key’s copy stand in', async () => {
  const { upstream, replicas, redis } = fleet;
  const [heard, other] = [replicas[0]!, replicas[1]!];
  await untilConnected(redis, 4);
  expect((await other.post(products('RK'), {}, K)).body.errors).toBeUndefined();
  expect((await other.post(products('RL'), {}, L)).body.errors).toBeUndefined();
  upstream.respond(faults.status(401, '{"status":401,"meta":{},"error":"API key revoked"}'));
  expect((await heard.post(products('RK'), {}, K)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  await expect.poll(async () => (await redis.client.keys('*:revoked:*')).length).toBe(1);
  upstream.respond(faults.status(503));
  // One slow reply: the other key's read times out; Redis answers again right after.
  redis.freeze();
  const slow = other.post(products('RL'), {}, L);
  await new Promise((r) => setTimeout(r, 400));
  redis.thaw();
  expect((await slow).body.extensions.stale).toHaveLength(1);
  const revoked = (await other.post(products('RK'), {}, K)).body;
  expect(revoked.extensions?.stale, `the revoked key's copy: ${JSON.stringify(revoked)}`).toBeUndefined();
  expect(revoked.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
});
