// @module-tag redis-server
import { expect, it } from 'vitest';
import { untilConnected } from '../helpers/redis.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

// Redis's copy of a URL goes before the copies replicas hold in memory on an ordinary day: pushed out by the copies'
// bound (PIM_STALE_REDIS_MAX_BYTES, one for the whole fleet, soonest to expire first), or lost with a Redis restarted
// empty or failed over. The fleet's record of a 404 was written only while that copy lived (it is the mark) or the
// replica that heard the 404 held one: a replica holding the copy in memory then heard of no 404 but its own, and
// served the deleted group's old data at the next outage.
const fleet = useRedisFleet({
  upstream: () => startUpstream(answerFor('v1')),
  env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', PIM_CACHE: 'false', PIM_STALE_REDIS_MAX_BYTES: '65536' },
});
const A = { 'x-api-key': 'key-of-a-123' };
const group = (id: string) => `{ g: classificationGroup(classificationId: "K1", classificationGroupId: "${id}") }`;
const products = (from: number, to: number) =>
  `{ ${Array.from({ length: to - from }, (_, i) => `p${i}: catalogProducts(catalogId: "FILL${from + i}")`).join(' ')} }`;

it.each([
  ['pushed out by the copies’ bound', 'GONE1'],
  ['lost with a Redis restarted empty', 'GONE2'],
])('Redis’s copy %s, a 404 heard by one replica ends the copy another holds in memory', async (how, id) => {
  const { upstream, replicas, redis } = fleet;
  const [heard, other] = [replicas[0]!, replicas[1]!];
  await untilConnected(redis, 4);
  upstream.respond(answerFor('v1'));
  expect((await other.post(group(id), {}, A)).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys(`*:lkg:*${id}*`)).length).toBe(1);
  if (how.startsWith('pushed')) {
    // Other pages the fleet reads: 64 KiB of copies is some 150 of these.
    for (let i = 0; i < 300; i += 10)
      expect((await other.post(products(i, i + 10), {}, A)).body.errors).toBeUndefined();
  } else {
    await redis.client.flushall();
  }
  await expect.poll(async () => (await redis.client.keys(`*:lkg:*${id}*`)).length).toBe(0);
  upstream.respond(faults.status(404, '{"status":404,"meta":{},"error":"No Classification found"}'));
  expect((await heard.post(group(id), {}, A)).body.errors[0].extensions.code).toBe('NOT_FOUND');
  await new Promise((r) => setTimeout(r, 300));
  upstream.respond(faults.status(503));
  const there = (await other.post(group(id), {}, A)).body;
  expect(there.extensions?.stale, `the deleted group's data served: ${JSON.stringify(there)}`).toBeUndefined();
});
