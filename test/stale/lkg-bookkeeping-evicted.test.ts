// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';

const KiB = 1_024;
let broken = false;
// Each page a distinct URL the PIM answers 2xx, about 8 KB; once `broken`, the PIM fails every call.
const padded = (req: IncomingMessage, res: ServerResponse) => {
  if (broken) return void res.writeHead(500).end();
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, pad: 'x'.repeat(8_192) }] }));
};

const fleet = useRedisFleet({
  upstream: () => startUpstream(padded),
  env: { PIM_CACHE: 'false', PIM_STALE_REDIS_MAX_BYTES: String(64 * KiB), PIM_RETRIES: '0' },
  replicas: 2,
});

const page = (n: number) => `{ p: catalogProducts(catalogId: "C", page: ${n}) }`;
const copies = () => fleet.redis.client.keys('pim-graphql:lkg:*');

// The last-known-good copies in Redis are bounded by three bookkeeping keys beside them (`lkg-index`, `lkg-sizes`,
// `lkg-bytes`). The deployment runs Redis with `allkeys-lru` (docs/deploying.md), which may evict any one of them on
// its own, like any other key. With the index gone, the sum still counts every copy it held, and nothing can ever take
// those bytes off again (only the index finds them, and each write keeps the sum alive): from then on each new copy
// is stored and at once forgotten as "over the bound", silently, for good. Another replica then has no copy to serve
// at the next PIM outage. A family whose bookkeeping lost a part should count afresh, not stop keeping copies.
it('keeps last-known-good copies in Redis after its index key was evicted', async () => {
  const [a, b] = fleet.replicas as [(typeof fleet.replicas)[0], (typeof fleet.replicas)[0]];
  // A fills the family to its bound (some seven copies of 8 KB fit in 64 KiB).
  await expect.poll(async () => (await a.post(page(0)), (await copies()).length)).toBeGreaterThan(0);
  for (let n = 1; n < 10; n++) expect((await a.post(page(n))).body.errors).toBeUndefined();
  await expect.poll(async () => (await copies()).some((key) => key.includes('page=9'))).toBe(true);
  expect(Number(await fleet.redis.client.get('pim-graphql:lkg-bytes'))).toBeGreaterThan(48 * KiB);

  // Redis evicts the index (allkeys-lru), as it may any key.
  expect(await fleet.redis.client.del('pim-graphql:lkg-index')).toBe(1);

  expect((await a.post(page(100))).body.errors).toBeUndefined();
  await expect
    .poll(async () => (await copies()).some((key) => key.includes('page=100')), { timeout: 3_000 })
    .toBe(true);
  // B never read page 100: only Redis can give it the last good answer when the PIM fails.
  broken = true;
  const answer = await b.post(page(100));
  expect(answer.body.errors).toBeUndefined();
  expect(answer.body.extensions?.stale).toHaveLength(1);
}, 30_000);
