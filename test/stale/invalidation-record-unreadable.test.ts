// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { answerFor } from '../stale/reads.ts';

const servers = closedAfterEach();
const TOKEN = 'a-long-enough-admin-token';

const cacheable =
  (version: string) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('cache-control', 'max-age=300');
    answerFor(version)(req, res);
  };
const products = '{ products: catalogProducts(catalogId: "T1") }';

// The fleet's invalidation record (`pim-graphql:invalidated`, tag -> epoch ms) is read every second and trusted as
// it comes: a field this version cannot read (not a number: written by another version or by hand) becomes NaN in
// the local record. Every later `since()` of a path under that tag is then NaN (Math.max with NaN), which compares as
// "never invalidated": even an invalidation of everything, sent to this very replica, no longer ends the freshness
// of that catalog's answers. The unreadable field should be skipped (or count as an invalidation), never poison the rest.
it('an unreadable field of the invalidation record does not stop later invalidations from ending freshness', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  await redis.client.hset('pim-graphql:invalidated', 'catalog:T1', 'not-a-time');
  const upstream = await servers.startUpstream(cacheable('v1'));
  const facade = await servers.startFacade(upstream.url, {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    CACHE_ADMIN_TOKEN: TOKEN,
  });
  // Stored in the shared HTTP cache (commands sent before the connection is up fail at once: asked again until then).
  await expect
    .poll(async () => (await facade.post(products), (await redis.client.keys('pim-graphql:http-cache:*')).length))
    .toBe(1);
  // The record is read at each connection and every second after.
  await sleep(1_500);
  expect((await facade.post(products)).body.data.products.data[0].version).toBe('v1');

  upstream.respond(cacheable('v2'));
  const invalidated = await facade.request('/cache/invalidate', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ all: true }),
  });
  expect(invalidated.status).toBe(200);
  const calls = upstream.requests.length;
  const after = await facade.post(products);
  // The PIM is asked again and its new answer served: the old one was invalidated.
  expect(upstream.requests.length).toBe(calls + 1);
  expect(after.body.data.products.data[0].version).toBe('v2');
}, 20_000);
