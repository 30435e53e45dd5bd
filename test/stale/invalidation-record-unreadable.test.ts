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
// Lua's tonumber reads `inf` where JavaScript's Number does not: the fold of a full record wrote `all = inf`, which the
// instance that folded it took as its own invalidation, NaN again.
it.each([
  ['not a number', 'not-a-time', 0],
  ['inf, in a record full enough to fold', 'inf', 1_000],
])(
  'an unreadable field of the invalidation record (%s) does not stop later invalidations from ending freshness',
  async (_, value, others) => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const fields = Object.fromEntries(Array.from({ length: others }, (_, i) => [`catalog:other-${i}`, '1']));
    await redis.client.hset('pim-graphql:invalidated', { ...fields, 'catalog:T1': value });
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

    const invalidate = (body: object) =>
      facade.request('/cache/invalidate', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // One tag more: a full record is folded into one `all` by this instance.
    expect((await invalidate({ catalogId: 'another' })).status).toBe(200);
    // The fold is a time every instance reads: the other replicas would skip `inf`, and so miss what it folded.
    if (others)
      expect(Number(await redis.client.hget('pim-graphql:invalidated', 'all'))).toBeLessThanOrEqual(Date.now());
    upstream.respond(cacheable('v2'));
    expect((await invalidate({ all: true })).status).toBe(200);
    const calls = upstream.requests.length;
    const after = await facade.post(products);
    // The PIM is asked again and its new answer served: the old one was invalidated.
    expect(upstream.requests.length).toBe(calls + 1);
    expect(after.body.data.products.data[0].version).toBe('v2');
  },
  20_000,
);
