// @module-tag redis-server
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { faults, startUpstream } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

const KiB = 1_024;
const fleet = useRedisFleet({
  upstream: () => startUpstream(answerFor('v1')),
  env: {
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
    PIM_STALE_REDIS_MAX_BYTES: String(64 * KiB),
  },
  replicas: 1,
});
const A = { 'x-api-key': 'key-of-a-123' };
const notFound = faults.status(404, '{"status":404,"meta":{},"error":"No Catalog found"}');

// A 404 with no copy in Redis is recorded too (the copy may be gone first while another replica holds one), so any
// caller's made-up ids write a record each: those records are bounded, and push out none written while a copy lived.
it('keeps the records of 404s without a copy within their bound, the copies’ verdicts and the URLs asked again untouched', async () => {
  const [facade] = fleet.replicas;
  const { client } = fleet.redis;
  expect((await facade!.post(`{ p: catalogProducts(catalogId: "KEPT") }`, {}, A)).body.errors).toBeUndefined();
  await expect.poll(async () => (await client.keys('pim-graphql:lkg:*KEPT*')).length).toBe(1);
  fleet.upstream.respond(notFound);
  expect((await facade!.post(`{ p: catalogProducts(catalogId: "KEPT") }`, {}, A)).body.errors[0].extensions.code).toBe(
    'NOT_FOUND',
  );
  await expect.poll(async () => (await client.keys('pim-graphql:ended:*KEPT*')).length).toBe(1);
  // A URL whose 404 is heard again has its record written again: the last of the family to go.
  const asked = async () =>
    expect((await facade!.post(`{ p: catalogProducts(catalogId: "ASKED") }`, {}, A)).body.errors).toHaveLength(1);
  await asked();
  for (let batch = 0; batch < 40; batch++) {
    if (batch === 35) await asked();
    const fields = Array.from({ length: 10 }, (_, i) => `p${i}: catalogProducts(catalogId: "MADE-UP-${batch}-${i}")`);
    const { body } = await facade!.post(`{ ${fields.join(' ')} }`, {}, A);
    expect(body.errors).toHaveLength(10);
  }
  await expect.poll(async () => (await client.keys('pim-graphql:ended-unmarked:*MADE-UP-39-9*')).length).toBe(1);
  const unmarked = await client.keys('pim-graphql:ended-unmarked:*');
  // Some 600 bytes each as the bound counts them: about a hundred of the 400 fit in 64 KiB.
  expect(unmarked.length).toBeGreaterThan(50);
  expect(unmarked.length).toBeLessThan(400);
  expect(Number(await client.get('pim-graphql:ended-unmarked-bytes'))).toBeLessThanOrEqual(64 * KiB);
  expect(await client.keys('pim-graphql:ended:*KEPT*')).toHaveLength(1);
  expect(await client.keys('pim-graphql:ended:*MADE-UP*')).toHaveLength(0);
  expect(await client.keys('pim-graphql:ended-unmarked:*MADE-UP-0-0*')).toHaveLength(0);
  expect(await client.keys('pim-graphql:ended-unmarked:*ASKED*')).toHaveLength(1);
});
