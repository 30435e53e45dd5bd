import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startFacade, useFacade, type Facade } from '../helpers/facade.ts';

const products = '{ catalogProducts(catalogId: "C1") }';
const both = '{ catalogProducts(catalogId: "C1") classificationGroups(classificationId: "K1") }';

/** An upstream answering each path with the caching headers `headersFor` gives it. */
function answerWith(headersFor: (url: string) => Record<string, string>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const extra = headersFor(req.url ?? '');
    const status = Number(extra['x-status'] ?? 200);
    res.writeHead(status, { 'content-type': 'application/json', date: new Date().toUTCString(), ...extra });
    res.end(JSON.stringify({ status, meta: { languageId: null }, data: [{ url: req.url }] }));
  };
}
const maxAge60 = answerWith(() => ({ 'cache-control': 'max-age=60' }));

// No last-known-good: the error cases below would otherwise get the answers earlier tests saw.
const fixture = useFacade({ PIM_API_KEY: 'server-key', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '0' }, maxAge60);

/** Sends one operation as a GET, as urql and persisted-query links do. */
function get(query: string, headers: Record<string, string> = {}) {
  return fetch(`${fixture.facade.url}?query=${encodeURIComponent(query)}`, { headers });
}

describe('Cache-Control from the upstream freshness', () => {
  it('is public with s-maxage when the server key was used and the upstream allowed shared caching', async () => {
    const response = await get(products);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=60');
    expect((await response.json()).data.catalogProducts.data).toHaveLength(1);
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('takes the smallest freshness among the fields, the upstream Age taken off', async () => {
    fixture.upstream.respond(
      answerWith((url): Record<string, string> =>
        url.includes('/products/') ? { 'cache-control': 'max-age=60' } : { 'cache-control': 'max-age=50', age: '20' },
      ),
    );
    const response = await get(both);
    expect(response.headers.get('cache-control')).toBe('public, max-age=30, s-maxage=30');
    expect(fixture.upstream.requests).toHaveLength(2);
  });

  it('is private when one upstream answer is private', async () => {
    fixture.upstream.respond(
      answerWith((url) => ({ 'cache-control': url.includes('/products/') ? 'max-age=60' : 'private, max-age=40' })),
    );
    expect((await get(both)).headers.get('cache-control')).toBe('private, max-age=40');
  });

  it('is private when the caller forwarded its own credential, with Vary on the credential headers', async () => {
    const credentials: Array<Record<string, string>> = [{ 'x-api-key': 'caller-key' }, { authorization: 'Bearer t' }];
    for (const credential of credentials) {
      const response = await get(products, credential);
      expect(response.headers.get('cache-control')).toBe('private, max-age=60');
      const vary = (response.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);
      expect(vary).toEqual(expect.arrayContaining(['accept', 'x-api-key', 'authorization']));
    }
    expect(fixture.upstream.requests.map((r) => r.headers['x-api-key'])).toEqual(['caller-key', 'server-key']);
  });

  it('counts a hit of the façade’s own upstream cache with the time it has spent there', async () => {
    const cached = await startFacade(fixture.upstream.url, { PIM_API_KEY: 'server-key' });
    try {
      expect((await fetchFrom(cached, products)).headers.get('cache-control')).toContain('max-age=60');
      const maxAgeOfHit = async () =>
        Number(/max-age=(\d+)/.exec((await fetchFrom(cached, products)).headers.get('cache-control') ?? '')?.[1]);
      // Hits until two whole seconds have been counted off (the headers have whole seconds).
      await expect.poll(maxAgeOfHit, { timeout: 4_000, interval: 100 }).toBeLessThanOrEqual(58);
      expect(fixture.upstream.requests).toHaveLength(1);
      expect(await maxAgeOfHit()).toBeGreaterThanOrEqual(50);
    } finally {
      await cached.close();
    }
  });
});

function fetchFrom(target: Facade, query: string) {
  return fetch(`${target.url}?query=${encodeURIComponent(query)}`);
}

describe('no-store', () => {
  it('for POST, with private when a credential was forwarded', async () => {
    expect((await fixture.facade.post(products)).status).toBe(200);
    const post = (headers: Record<string, string>) =>
      fetch(fixture.facade.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: products }),
      });
    expect((await post({})).headers.get('cache-control')).toBe('no-store');
    expect((await post({ 'x-api-key': 'caller-key' })).headers.get('cache-control')).toBe('private, no-store');
  });

  it('for errors and partial data', async () => {
    fixture.upstream.respond(
      answerWith((url): Record<string, string> => (url.includes('/products/') ? { 'x-status': '500' } : {})),
    );
    const partial = await get('{ catalogProducts(catalogId: "C1") ok: classificationGroups(classificationId: "K1") }');
    const body = await partial.json();
    expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    expect(body.data.ok).not.toBeNull();
    expect(partial.headers.get('cache-control')).toBe('no-store');
    const refused = await get('{ catalogProducts(catalogId: "") }', { 'x-api-key': 'k' });
    expect(refused.headers.get('cache-control')).toBe('private, no-store');
    const invalid = await get('{ nope }', { accept: 'application/graphql-response+json' });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('cache-control')).toBe('no-store');
  });

  it('when the upstream gave no freshness, or no upstream answer was used', async () => {
    fixture.upstream.respond(answerWith(() => ({})));
    expect((await get(products)).headers.get('cache-control')).toBe('no-store');
    fixture.upstream.respond(answerWith(() => ({ 'cache-control': 'no-store' })));
    expect((await get(products)).headers.get('cache-control')).toBe('no-store');
    expect((await get('{ __typename }')).headers.get('cache-control')).toBe('no-store');
  });

  it('for @defer multipart responses', async () => {
    const response = await get(
      '{ catalogProducts(catalogId: "C1") ... @defer { g: classificationGroups(classificationId: "K1") } }',
      {
        accept: 'multipart/mixed',
      },
    );
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    await response.text();
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('etag')).toBeNull();
  });

  // Yoga's own `Cache-Control: no-cache` on an event stream stayed beside ours (a second header line).
  it('for server-sent events, as the one Cache-Control', async () => {
    const response = await get(products, { accept: 'text/event-stream' });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await response.text();
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('for /health, /readiness and /metrics', async () => {
    for (const path of ['/health', '/readiness', '/metrics']) {
      const response = await fetch(`${fixture.facade.origin}${path}`);
      await response.text();
      expect(response.headers.get('cache-control'), path).toBe('no-store');
    }
  });
});

describe('ETag', () => {
  it('is a strong hash of the body, and If-None-Match gets 304 without a body', async () => {
    const first = await get(products);
    const body = await first.text();
    const tag = first.headers.get('etag');
    expect(tag).toMatch(/^"[^"]+"$/);
    const again = await get(products, { 'if-none-match': tag! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(tag);
    expect(again.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=60');
    const other = await get(products, { 'if-none-match': '"something-else"' });
    expect(other.status).toBe(200);
    expect(await other.text()).toBe(body);
  });

  it('differs when the body does', async () => {
    const a = await get(products);
    const b = await get('{ catalogProducts(catalogId: "C2") }');
    expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
  });
});
