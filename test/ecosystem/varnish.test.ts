// @module-tag varnishd
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startVarnish } from '../helpers/varnish.ts';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';

// Which caller the upstream saw, as a label: bodies tell the callers apart without echoing keys.
const tenants: Record<string, string> = { 'server-key': 'public', 'key-a': 'A', 'key-b': 'B' };

/** Answers with the tenant of the key it got; catalog ids pick the caching headers and the status. */
function catalogUpstream(req: IncomingMessage, res: ServerResponse) {
  const url = req.url ?? '';
  const status = url.includes('/FAILING/') ? 500 : 200;
  const cacheControl = url.includes('/SHORT/') ? 'max-age=2' : url.includes('/UNCACHED/') ? undefined : 'max-age=60';
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(cacheControl ? { 'cache-control': cacheControl } : {}),
  });
  const tenant = tenants[String(req.headers['x-api-key'])] ?? 'unknown';
  res.end(JSON.stringify({ status, meta: { languageId: null }, data: [{ url, tenant }] }));
}

/** The façade behind Varnish, counting the GraphQL requests that reach it; `close` stops both. */
async function startStack(upstreamUrl: string, env: Record<string, string> = {}) {
  const facade = await startFacade(upstreamUrl, { PIM_API_KEY: 'server-key', PIM_CACHE: 'false', ...env });
  const seen = { graphql: 0 };
  facade.server.on('request', (req: IncomingMessage) => void (req.url?.startsWith('/graphql') && seen.graphql++));
  const varnish = await startVarnish(facade.port).catch(async (error: unknown) => {
    await facade.close();
    throw error;
  });
  const close = async () => {
    await varnish.close();
    await facade.close();
  };
  return { facade, seen, varnish, close };
}

describe('behind Varnish', () => {
  let upstream: Upstream;
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    upstream = await startUpstream(catalogUpstream);
    stack = await startStack(upstream.url);
  });
  afterAll(async () => {
    await stack?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.reset();
    stack.seen.graphql = 0;
  });

  /** GETs `{ catalogProducts(catalogId) }` through Varnish; returns the tenant the answer was made for. */
  async function get(catalogId: string, headers: Record<string, string> = {}) {
    const query = `{ catalogProducts(catalogId: "${catalogId}") }`;
    const response = await fetch(`${stack.varnish.url}/graphql?query=${encodeURIComponent(query)}`, { headers });
    const body = await response.json();
    return {
      response,
      body,
      tenant: body.data?.catalogProducts?.data[0].tenant,
      cache: response.headers.get('x-cache'),
    };
  }

  it('answers a second identical GET itself: neither the façade nor the upstream sees it', async () => {
    const first = await get('SAME');
    expect(first.response.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=60');
    expect([first.cache, first.tenant]).toEqual(['miss', 'public']);
    const second = await get('SAME');
    expect([second.cache, second.tenant]).toEqual(['hit', 'public']);
    expect(second.body).toEqual(first.body);
    expect(stack.seen.graphql).toBe(1);
    expect(upstream.requests).toHaveLength(1);
  });

  it('never gives one X-API-KEY the answer made for another caller', async () => {
    expect((await get('KEYS')).tenant).toBe('public');
    const a = await get('KEYS', { 'x-api-key': 'key-a' });
    expect([a.cache, a.tenant]).toEqual(['miss', 'A']);
    expect(a.response.headers.get('cache-control')).toBe('private, max-age=60');
    expect((await get('KEYS', { 'x-api-key': 'key-b' })).tenant).toBe('B');
    expect((await get('KEYS', { 'x-api-key': 'key-a' })).tenant).toBe('A');
    expect((await get('KEYS', { authorization: 'Bearer t' })).tenant).toBe('public');
    // The stored public answer is still there for callers without a key.
    expect(await get('KEYS').then((r) => [r.cache, r.tenant])).toEqual(['hit', 'public']);
    expect(upstream.requests.map((r) => r.headers['x-api-key'])).toEqual([
      'server-key',
      'key-a',
      'key-b',
      'key-a',
      'server-key',
    ]);
    expect(stack.seen.graphql).toBe(5);
  });

  it('never stores no-store answers or errors', async () => {
    for (const catalogId of ['UNCACHED', 'FAILING']) {
      for (let i = 0; i < 2; i++) {
        const answer = await get(catalogId);
        expect(answer.cache, catalogId).toBe('miss');
        expect(answer.response.headers.get('cache-control')).toBe('no-store');
      }
    }
    expect((await get('FAILING')).body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    expect(stack.seen.graphql).toBe(5);
  });

  it('lets an answer expire when the upstream’s max-age says', async () => {
    const started = Date.now();
    expect((await get('SHORT')).response.headers.get('cache-control')).toBe('public, max-age=2, s-maxage=2');
    expect((await get('SHORT')).cache).toBe('hit');
    while (stack.seen.graphql < 2 && Date.now() - started < 8_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await get('SHORT');
    }
    const askedAgainAfter = Date.now() - started;
    expect(stack.seen.graphql).toBe(2);
    expect(askedAgainAfter).toBeGreaterThanOrEqual(1_500);
    expect(askedAgainAfter).toBeLessThan(6_000);
    // Varnish may refetch in the background (grace): the façade's upstream call follows shortly.
    await expect.poll(() => upstream.requests.length, { timeout: 3_000 }).toBe(2);
  });
});

describe('behind Varnish, with two CORS origins', () => {
  let upstream: Upstream;
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    upstream = await startUpstream(catalogUpstream);
    stack = await startStack(upstream.url, { CORS_ORIGINS: 'https://a.example,https://b.example' });
  });
  afterAll(async () => {
    await stack?.close();
    await upstream?.close();
  });

  /** GETs one cacheable query through Varnish from `origin` (none: no Origin header); returns what CORS said. */
  async function getFrom(origin?: string) {
    const query = encodeURIComponent('{ catalogProducts(catalogId: "CORS") }');
    const response = await fetch(`${stack.varnish.url}/graphql?query=${query}`, {
      headers: origin ? { origin } : {},
    });
    expect((await response.json()).errors).toBeUndefined();
    return { allowed: response.headers.get('access-control-allow-origin'), vary: response.headers.get('vary') };
  }

  it('gives each Origin its own Access-Control-Allow-Origin, whoever filled the cache first', async () => {
    // A request without Origin fills the cache first, as anyone can.
    const none = await getFrom();
    expect(none.allowed).toBeNull();
    expect(none.vary).toMatch(/\bOrigin\b/);
    const a = await getFrom('https://a.example');
    expect(a.allowed).toBe('https://a.example');
    expect(a.vary).toMatch(/\bOrigin\b/);
    expect((await getFrom('https://b.example')).allowed).toBe('https://b.example');
    expect((await getFrom('https://a.example')).allowed).toBe('https://a.example');
    expect((await getFrom('https://evil.example')).allowed).toBeNull();
    expect((await getFrom()).allowed).toBeNull();
    // Each Origin (and no Origin) is stored once: the repeats of a.example and of none come from Varnish.
    expect(stack.seen.graphql).toBe(4);
  });
});

/**
 * A storefront's browsing mix over the demo catalog: category pages (a group and its products),
 * product list pages and the group listing, in two languages, popular pages asked more often;
 * one request in ten carries a caller's own key. Seeded, so every run sends the same requests.
 */
function browsingMix(requests: number) {
  const groups = ['MC-010000', 'MC-020000', 'MC-030000', 'MC-050000', 'MC-050200', 'MC-090000'];
  const pages: string[] = [];
  for (const languageId of ['en', 'de']) {
    for (const groupId of groups) {
      pages.push(
        `{ group: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "${groupId}", levels: 1, languageId: "${languageId}") products: catalogProducts(catalogId: "MACHINERY", classificationGroupId: "${groupId}", languageId: "${languageId}", pageSize: 12) }`,
      );
    }
    for (const page of [0, 1, 2]) {
      pages.push(
        `{ catalogProducts(catalogId: "MACHINERY", languageId: "${languageId}", page: ${page}, pageSize: 12) }`,
      );
    }
    pages.push(`{ classificationGroups(classificationId: "ECLASS-DEMO", languageId: "${languageId}", pageSize: 50) }`);
  }
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: requests }, () => ({
    query: pages[Math.floor(pages.length * random() ** 2)]!,
    key: random() < 0.1 ? `shopper-${Math.floor(random() * 3)}` : undefined,
  }));
}

describe('hit share of a browsing mix behind Varnish', () => {
  let upstream: DemoUpstream;
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    upstream = await startDemoUpstream();
    stack = await startStack(upstream.url);
  });
  afterAll(async () => {
    await stack?.close();
    await upstream?.close();
  });

  it('serves every repeated anonymous page from Varnish and no keyed one', async () => {
    const mix = browsingMix(300);
    upstream.reset();
    let hits = 0;
    for (const { query, key } of mix) {
      const response = await fetch(`${stack.varnish.url}/graphql?query=${encodeURIComponent(query)}`, {
        headers: key ? { 'x-api-key': key } : {},
      });
      expect((await response.json()).errors).toBeUndefined();
      const hit = response.headers.get('x-cache') === 'hit';
      if (key) expect(hit).toBe(false);
      if (hit) hits++;
    }
    const anonymous = mix.filter((r) => !r.key);
    const distinct = new Set(anonymous.map((r) => r.query)).size;
    expect(hits).toBe(anonymous.length - distinct);
    expect(stack.seen.graphql).toBe(mix.length - hits);
    console.info(
      `Varnish hit share: ${hits}/${mix.length} = ${((100 * hits) / mix.length).toFixed(1)} % ` +
        `(${anonymous.length} anonymous requests over ${distinct} distinct pages; ${mix.length - anonymous.length} with a key); ` +
        `façade requests ${stack.seen.graphql}, upstream calls ${upstream.requests.length}`,
    );
  }, 60_000);
});
