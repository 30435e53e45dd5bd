// @module-tag redis-server
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { purge } from './reads.ts';
import { startUpstream } from '../helpers/upstream.ts';

const TOKEN = 'a-long-enough-admin-token';
let version = 'v1';
function answer(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] }));
}

// The fleet's REDIS_TIMEOUT_MS, as the docs' wait must cover it (useRedisFleet's SLOW_REDIS_OK).
const fleet = useRedisFleet({
  upstream: () => startUpstream(answer),
  env: { CACHE_ADMIN_TOKEN: TOKEN, RESPONSE_CACHE_MAX_BYTES: '1048576', REDIS_TIMEOUT_MS: '200' },
});

// docs/integration.md's loop: 1. purge the façade, 2. purge the CDN. The purge answers 200 once this replica and
// Redis hold it; the other replicas read it up to a second later (plus a Redis reply). Run right after it, a CDN refill
// from one of them got the old catalog, public for its whole max-age: `expected [ 'v1', …(1) ] to deeply equal
// [ 'v2', …(1) ]`. The docs' loop says to wait between the two steps.
it("the docs' purge loop waits for the other replicas before purging the CDN", () => {
  const doc = readFileSync(new URL('../../docs/integration.md', import.meta.url), 'utf8');
  const loop = doc.slice(doc.indexOf('# 1. the façade forgets'), doc.indexOf('# 2. the CDN drops'));
  expect(loop).toMatch(/\nsleep 2\n/);
});

it('with that wait, a CDN refill from any replica gets the new catalog', async () => {
  const [a, b] = [fleet.replicas[0]!, fleet.replicas[1]!];
  const url = `/graphql?query=${encodeURIComponent('{ p: catalogProducts(catalogId: "CDN") }')}`;
  expect((await b.get(url)).body.data.p.data[0].version).toBe('v1');
  expect((await b.get(url)).body.data.p.data[0].version).toBe('v1');
  version = 'v2';
  expect(await purge(a.origin, TOKEN, { catalogId: 'CDN' })).toBe(200);
  // The wait of the docs' loop, then the CDN, purged, refills from B.
  await new Promise((resolve) => setTimeout(resolve, 1_000 + 200 + 50));
  const refill = await b.get(url);
  expect(refill.body.data.p.data[0].version).toBe('v2');
  expect(refill.headers.get('cache-control')).toMatch(/^public/);
});
