import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// RFC 9111 §4.3.4: a 304 that confirms a stored answer updates its stored header fields with its own. A PIM (or the CDN
// in front of it) that answers the revalidation with a new Cache-Control, or with the Age its own copy has, says how
// fresh the confirmed answer is from then on. The façade kept the old Cache-Control and made the answer brand new
// (Age 0): the response claimed the old lifetime and the cache of results answered from it past what the PIM allowed.
const servers = closedAfterEach();
const envelope = (req: IncomingMessage) =>
  JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] });

// The first answer is fresh for two more seconds (a CDN's copy: max-age=60, Age 58), then stale; its revalidation
// gets a 304 carrying `headers304`.
const pim = (headers304: Record<string, string>) => (req: IncomingMessage, res: ServerResponse) => {
  if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304, { etag: '"v1"', ...headers304 }).end();
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60', age: '58', etag: '"v1"' });
  res.end(envelope(req));
};

const url = `/graphql?query=${encodeURIComponent('query P { catalogProducts(catalogId: "a") }')}`;
const env = { RESPONSE_CACHE_MAX_BYTES: '1048576' };
const key = { 'x-api-key': 'alice-key' };

describe('an answer a 304 confirms', () => {
  it('takes the Cache-Control the 304 sends: max-age=0 is neither claimed fresh nor kept in the cache of results', async () => {
    const { upstream, facade } = await servers.start(pim({ 'cache-control': 'max-age=0' }), env);
    expect((await facade.get(url, key)).headers.get('cache-control')).toBe('private, max-age=2');
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const confirmed = await facade.get(url, key);
    expect(upstream.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"']);
    expect(confirmed.body.data.catalogProducts.data).toHaveLength(1);
    expect(confirmed.headers.get('cache-control')).toBe('private, no-store');
    // The PIM asked for every reuse to be revalidated: the repeat reaches it, not an entry of the cache of results.
    const repeat = await facade.get(url, key);
    expect(repeat.body.data.catalogProducts.data).toHaveLength(1);
    expect(facade.app.responses!.stats().hits).toBe(0);
    expect(upstream.requests.length).toBe(3);
  });

  it('takes the Age the 304 sends: the CDN’s copy it confirms has two seconds left, not sixty', async () => {
    const { upstream, facade } = await servers.start(pim({ 'cache-control': 'max-age=60', age: '58' }), env);
    await facade.get(url, key);
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const confirmed = await facade.get(url, key);
    expect(upstream.requests).toHaveLength(2);
    expect(confirmed.headers.get('cache-control')).toBe('private, max-age=2');
  });
});
