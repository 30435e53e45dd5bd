// @module-tag redis-server
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';

// integration.md: "A response still being executed when the invalidation came, which holds an answer of a matching
// call begun before it, goes out no-store". A hit of the cache of results is such a response: its entry holds answers
// read before the purge. With APQ in Redis, a hit that registers its document (query text and hash) waits for that
// write before its Cache-Control is worked out; a purge landing meanwhile dropped the entry, yet the hit went out
// with the entry's max-age, so a browser or CDN (refilling right after its own purge) kept the old catalog.
const servers = closedAfterEach();
let stopRedis: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopRedis?.();
  stopRedis = undefined;
});

const pim = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

it('a hit still going out when POST /cache/invalidate comes goes out no-store, as a miss does', async () => {
  const redis = await startRedis();
  stopRedis = () => redis.stop();
  const token = 'hit-during-purge-admin-token';
  const { facade } = await servers.start(pim, {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '800',
    GRAPHQL_BUDGET_MS: '5000',
    RESPONSE_CACHE_MAX_BYTES: '1048576',
    CACHE_ADMIN_TOKEN: token,
  });
  const query = 'query P { catalogProducts(catalogId: "MASTER") }';
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  const body = { query, extensions: { persistedQuery: { version: 1, sha256Hash } } };
  const headers = { 'x-api-key': 'alice-key' };
  const filled = await facade.postBody(body, headers);
  expect(filled.body.errors).toBeUndefined();
  const get = () =>
    facade.get(
      `/graphql?query=${encodeURIComponent(query)}&extensions=${encodeURIComponent(JSON.stringify(body.extensions))}`,
      headers,
    );
  const first = await get();
  expect(first.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
  const { hits } = facade.app.responses!.stats();
  // Redis stops answering: the hit's APQ registration waits REDIS_TIMEOUT_MS before its response is finished.
  redis.freeze();
  try {
    const hit = get();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const purge = facade.request('/cache/invalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ catalogId: 'MASTER' }),
    });
    const answer = await hit;
    await purge;
    expect(facade.app.responses!.stats().hits).toBe(hits + 1);
    expect(answer.headers.get('cache-control')).toBe('private, no-store');
  } finally {
    redis.thaw();
  }
});
