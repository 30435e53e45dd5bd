import { describe, expect, it, vi } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const products = '{ catalogProducts(catalogId: "c1", page: 0) }';

// Answers like echo, with the given caching headers, and 304 to a matching If-None-Match.
const withHeaders =
  (headers: Record<string, string>): UpstreamHandler =>
  (req, res) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (headers.etag && req.headers['if-none-match'] === headers.etag) return void res.writeHead(304).end();
    echo(req, res);
  };

describe('HTTP cache of upstream answers', () => {
  const fixture = useFacade({ PIM_COALESCE: 'false' });

  const twice = async (headers: Record<string, string> = {}, other = headers) => {
    const first = await fixture.facade.post(products, {}, headers);
    const second = await fixture.facade.post(products, {}, other);
    expect(second.body).toEqual(first.body);
    expect(first.body.errors).toBeUndefined();
  };

  it('answers a repeat from the cache while max-age lasts, then revalidates with the ETag', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=2', etag: '"v1"' }));
    await twice({ 'x-api-key': 'fresh' });
    expect(fixture.upstream.requests).toHaveLength(1);
    // Hits until max-age runs out (the Date header has whole seconds, so within 1-2 s), then one revalidation.
    await vi.waitFor(
      async () => {
        const { body } = await fixture.facade.post(products, {}, { 'x-api-key': 'fresh' });
        expect(body.errors).toBeUndefined();
        expect(fixture.upstream.requests).toHaveLength(2);
      },
      { timeout: 4_000, interval: 50 },
    );
    expect(fixture.upstream.requests[1]!.headers['if-none-match']).toBe('"v1"');
  });

  it('counts the Age the upstream reports against max-age', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=60', age: '60' }));
    await twice({ 'x-api-key': 'aged' });
    expect(fixture.upstream.requests).toHaveLength(2);
  });

  it('never stores an answer marked no-store', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'no-store, max-age=60' }));
    await twice({ 'x-api-key': 'nostore' });
    expect(fixture.upstream.requests).toHaveLength(2);
  });

  it('keeps cached answers private to the credential that fetched them', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=60' }));
    await twice({ 'x-api-key': 'alice' }, { 'x-api-key': 'bob' });
    await fixture.facade.post(products, {}, { 'x-api-key': 'alice' });
    expect(fixture.upstream.requests.map((r) => r.headers['x-api-key'])).toEqual(['alice', 'bob']);
  });

  it('leaves answers without caching headers uncached by default', async () => {
    await twice({ 'x-api-key': 'plain' });
    expect(fixture.upstream.requests).toHaveLength(2);
  });
});

describe('PIM_CACHE_TTL_MS for a service that sends no caching headers', () => {
  const fixture = useFacade({ PIM_CACHE_TTL_MS: '1500' });

  // Freshness counts from the upstream's Date header, which has whole seconds, hence a TTL over 1 s.
  it('caches for the configured time, then asks again', async () => {
    await fixture.facade.post(products);
    await fixture.facade.post(products);
    expect(fixture.upstream.requests).toHaveLength(1);
    await vi.waitFor(
      async () => {
        await fixture.facade.post(products);
        expect(fixture.upstream.requests).toHaveLength(2);
      },
      { timeout: 4_000, interval: 50 },
    );
  });

  it('still honours no-store', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'no-store' }));
    fixture.upstream.requests.length = 0;
    await fixture.facade.post(products, {}, { 'x-api-key': 'ttl' });
    await fixture.facade.post(products, {}, { 'x-api-key': 'ttl' });
    expect(fixture.upstream.requests).toHaveLength(2);
  });
});

describe('HTTP cache with Vary on a forwarded header', () => {
  const fixture = useFacade({ PIM_FORWARD_HEADERS: 'x-api-key,accept-language' });

  it('keeps one answer per value of the header the upstream varies on', async () => {
    fixture.upstream.respond(withHeaders({ 'cache-control': 'max-age=60', vary: 'accept-language' }));
    const ask = (language: string) =>
      fixture.facade.post(products, {}, { 'x-api-key': 'vary', 'accept-language': language });
    for (const language of ['de', 'de', 'en', 'de', 'en', 'de'])
      expect((await ask(language)).body.errors).toBeUndefined();
    expect(fixture.upstream.requests.map((r) => r.headers['accept-language'])).toEqual(['de', 'en']);
  });
});
