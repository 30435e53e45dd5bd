// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import type { Facade } from '../helpers/facade.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';

let version = 'v1';
function answer(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] }));
}
const versionOf = async (facade: Facade, id = 'SKEW') =>
  (await facade.post(`{ p: catalogProducts(catalogId: "${id}") }`)).body.data.p.data[0].version;

const fleet = useRedisFleet({ upstream: () => startUpstream(answer), env: { RESPONSE_CACHE_MAX_BYTES: '1048576' } });

// The fleet's record holds the sending replica's clock. One 5 s behind wrote a time before the answers this replica
// had stored meanwhile, which stayed fresh for their whole max-age: an invalidation that did not take.
it('an invalidation made on a replica whose clock is behind still ends what this replica serves', async () => {
  const b = fleet.replicas[1]!;
  expect(await versionOf(b)).toBe('v1');
  version = 'v2';
  // What replica A, 5 s behind B, writes when the publish hook reaches it.
  await fleet.redis.client.hset('pim-graphql:invalidated', 'catalog:SKEW', String(Date.now() - 5_000));
  // B reads the fleet's invalidations once a second.
  await sleep(1_500);
  expect(await versionOf(b)).toBe('v2');
  expect(await versionOf(b)).toBe('v2');
});

// Counted from max(its time, now), a time 30 s ahead was kept: on every replica each answer of that catalog stored in
// the next 30 s counted as stored before the invalidation, and the catalog was read from the PIM on every request.
it('an invalidation made on a replica whose clock is ahead does not make a catalog uncacheable for its skew', async () => {
  const b = fleet.replicas[1]!;
  const calls = () => fleet.upstream.requests.filter((r) => r.url.includes('/catalogs/AHEAD/')).length;
  await versionOf(b, 'AHEAD');
  await fleet.redis.client.hset('pim-graphql:invalidated', 'catalog:AHEAD', String(Date.now() + 30_000));
  await sleep(1_500);
  await versionOf(b, 'AHEAD');
  expect(calls()).toBe(2);
  for (let i = 0; i < 3; i++) await versionOf(b, 'AHEAD');
  expect(calls()).toBe(2);
});
