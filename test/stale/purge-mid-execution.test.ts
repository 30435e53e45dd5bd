import { expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { purge } from './reads.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const TOKEN = 'a-long-enough-admin-token';
const servers = closedAfterEach();

// A PIM whose MASTER catalog answers at once and whose SLOW catalog takes 1.5 s; each fresh for five minutes.
let published = 'v1';
const pim: UpstreamHandler = (req, res) => {
  const version = published;
  const answer = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, version }] }));
  };
  const timer = setTimeout(answer, req.url?.includes('/SLOW/') ? 1_500 : 0);
  res.once('close', () => clearTimeout(timer));
};

// The publish hook purges the façade, then the CDN by the same tag. A response still being executed when the façade
// was purged, holding data the purge ended (read before it), must not go out cacheable: a CDN storing it after its own
// purge would serve the old catalog for the whole max-age.
it('a result holding data read before a purge of its catalog does not go out cacheable', async () => {
  const { upstream, facade } = await servers.start(pim, { CACHE_ADMIN_TOKEN: TOKEN });
  const query = '{ m: catalogProducts(catalogId: "MASTER") s: catalogProducts(catalogId: "SLOW") }';
  const pending = facade.get(`/graphql?query=${encodeURIComponent(query)}`);
  await vi.waitFor(() => expect(upstream.requests).toHaveLength(2));
  await new Promise((resolve) => setTimeout(resolve, 200));
  published = 'v2';
  expect(await purge(facade.origin, TOKEN, { catalogId: 'MASTER' })).toBe(200);
  const answer = await pending;
  expect(answer.body.data.m.data[0].version).toBe('v1');
  expect([answer.headers.get('cache-control'), answer.headers.get('surrogate-key')]).toEqual(['no-store', null]);
});
