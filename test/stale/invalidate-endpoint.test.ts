import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { createMetricsServer } from '../../src/http/metrics-server.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

const TOKEN = 'a-long-enough-admin-token';
const query = '{ products: catalogProducts(catalogId: "MASTER") }';
const cacheable = answerFor('v1');

describe('POST /cache/invalidate', () => {
  const servers = closedAfterEach();
  /** The façade (with `env`) in front of a PIM whose answers stay fresh for five minutes, and that PIM. */
  async function start(env: Record<string, string>) {
    const handler: UpstreamHandler = (req, res) => (res.setHeader('cache-control', 'max-age=300'), cacheable(req, res));
    const { upstream, facade } = await servers.start(handler, { PIM_API_KEY: 'key-of-a-123', ...env });
    return { ...facade, upstream };
  }
  const post = (origin: string, body: string, authorization?: string) =>
    fetch(`${origin}/cache/invalidate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
      body,
    });

  it('ends the freshness of the matching answers: the next request goes to the PIM', async () => {
    const { upstream, origin, get } = await start({ CACHE_ADMIN_TOKEN: TOKEN });
    const url = `/graphql?query=${encodeURIComponent(query)}`;
    expect((await get(url)).headers.get('surrogate-key')).toBe('catalog:MASTER');
    await get(url);
    expect(upstream.requests).toHaveLength(1);
    // Another catalog's invalidation leaves it fresh; its own ends it.
    expect((await post(origin, '{"catalogId":"OTHER"}', `Bearer ${TOKEN}`)).status).toBe(200);
    await get(url);
    expect(upstream.requests).toHaveLength(1);
    expect((await post(origin, '{"catalogId":"MASTER"}', `Bearer ${TOKEN}`)).status).toBe(200);
    await get(url);
    expect(upstream.requests).toHaveLength(2);
  });

  it('matches an id with an apostrophe, which the URL parser would encode in a query but not in a tag', async () => {
    const { upstream, origin, get } = await start({ CACHE_ADMIN_TOKEN: TOKEN });
    const byClassification = '{ products: catalogProducts(catalogId: "MASTER", classificationId: "O\'Neil") }';
    const url = `/graphql?query=${encodeURIComponent(byClassification)}`;
    expect((await get(url)).headers.get('surrogate-key')).toBe('catalog:MASTER classification:O%27Neil');
    await get(url);
    expect(upstream.requests).toHaveLength(1);
    expect((await post(origin, JSON.stringify({ classificationId: "O'Neil" }), `Bearer ${TOKEN}`)).status).toBe(200);
    await get(url);
    expect(upstream.requests).toHaveLength(2);
  });

  // A search narrowed by a group alone reads that group's classification, which its path does not name: any
  // classification's invalidation ends it (it stayed fresh for its whole max-age), and a CDN finds it by `classification:`.
  it('ends a search narrowed by a classification group alone with any classification', async () => {
    const { upstream, origin, get } = await start({ CACHE_ADMIN_TOKEN: TOKEN });
    const byGroup = '{ products: catalogProducts(catalogId: "MASTER", classificationGroupId: "EC000001") }';
    const url = `/graphql?query=${encodeURIComponent(byGroup)}`;
    expect((await get(url)).headers.get('surrogate-key')).toBe('catalog:MASTER classification:');
    await get(url);
    expect(upstream.requests).toHaveLength(1);
    const purged = await post(origin, '{"classificationId":"ETIM-9"}', `Bearer ${TOKEN}`);
    // The answer names it, for the hook that purges the CDN next.
    expect(await purged.json()).toEqual({ invalidated: 'classification:ETIM-9', alsoInvalidated: ['classification:'] });
    await get(url);
    expect(upstream.requests).toHaveLength(2);
  });

  // `classificationId` filters the products; the group's own classification is `classificationGroupClassificationId`,
  // which this search leaves out: the group's classification may be another, whose invalidation ends it too.
  it('ends a search narrowed by a group and another classification with any classification', async () => {
    const { upstream, origin, get } = await start({ CACHE_ADMIN_TOKEN: TOKEN });
    const byBoth =
      '{ p: catalogProducts(catalogId: "MASTER", classificationId: "ETIM-9", classificationGroupId: "EC1") }';
    const url = `/graphql?query=${encodeURIComponent(byBoth)}`;
    expect((await get(url)).headers.get('surrogate-key')).toBe('catalog:MASTER classification:ETIM-9 classification:');
    await get(url);
    expect(upstream.requests).toHaveLength(1);
    expect((await post(origin, '{"classificationId":"ECLASS-14"}', `Bearer ${TOKEN}`)).status).toBe(200);
    await get(url);
    expect(upstream.requests).toHaveLength(2);
    // Naming the group's classification names all it reads.
    const named = byBoth.replace(
      'classificationGroupId',
      'classificationGroupClassificationId: "ECLASS-14", classificationGroupId',
    );
    expect((await get(`/graphql?query=${encodeURIComponent(named)}`)).headers.get('surrogate-key')).toBe(
      'catalog:MASTER classification:ETIM-9 classification:ECLASS-14',
    );
  });

  describe('while a call sent before it is still out', () => {
    // The PIM reads its data when a call arrives and answers 1.5 s later, fresh for five minutes.
    async function purgeDuringSlowCall() {
      let published = 'v1';
      const slow: UpstreamHandler = (req, res) => {
        const version = published;
        const timer = setTimeout(
          () => (res.setHeader('cache-control', 'max-age=300'), answerFor(version)(req, res)),
          1_500,
        );
        res.once('close', () => clearTimeout(timer));
      };
      const { upstream, facade } = await servers.start(slow, { PIM_API_KEY: 'key-of-a-123', CACHE_ADMIN_TOKEN: TOKEN });
      const url = `/graphql?query=${encodeURIComponent(query)}`;
      const before = facade.get(url);
      await vi.waitFor(() => expect(upstream.requests).toHaveLength(1));
      published = 'v2';
      expect((await post(facade.origin, '{"catalogId":"MASTER"}', `Bearer ${TOKEN}`)).status).toBe(200);
      return { upstream, url, get: facade.get, before };
    }
    const version = (answer: { body: any }) => answer.body.data.products.data[0].version;

    it('an answer the PIM read before the purge is not kept fresh after it', async () => {
      const { upstream, url, get, before } = await purgeDuringSlowCall();
      const old = await before;
      expect(version(old)).toBe('v1');
      expect(old.headers.get('cache-control')).toMatch(/no-store/);
      expect(version(await get(url))).toBe('v2');
      expect(upstream.requests).toHaveLength(2);
    });

    it('the next request after the purge asks the PIM rather than joining that call', async () => {
      const { upstream, url, get, before } = await purgeDuringSlowCall();
      const next = await get(url);
      await before;
      expect(version(next)).toBe('v2');
      expect(upstream.requests).toHaveLength(2);
    });

    // A PIM whose call number `slow` takes 1.5 s, the others none; `published` is what it reads on arrival.
    const pimWith = (slow: number, cacheControl = 'max-age=300') => {
      const pim = { published: 'v1', calls: 0, slowAnswered: false, handler: undefined as unknown as UpstreamHandler };
      pim.handler = (req, res) => {
        const [call, read] = [pim.calls++, pim.published];
        const answer = () => {
          res.setHeader('cache-control', cacheControl);
          answerFor(read)(req, res);
          if (call === slow) pim.slowAnswered = true;
        };
        const timer = setTimeout(answer, call === slow ? 1_500 : 0);
        res.once('close', () => clearTimeout(timer));
      };
      return pim;
    };
    const purge = (origin: string) => post(origin, '{"catalogId":"MASTER"}', `Bearer ${TOKEN}`);
    const url = (document: string) => `/graphql?query=${encodeURIComponent(document)}`;
    // The same upstream call from another document: the cache of results does not answer it.
    const again = url('{ products: catalogProducts(catalogId: "MASTER") again: catalogProducts(catalogId: "MASTER") }');

    it('an answer read before the purge and arriving after a later call’s is not stored fresh', async () => {
      const pim = pimWith(0);
      const { upstream, facade } = await servers.start(pim.handler, { CACHE_ADMIN_TOKEN: TOKEN });
      const before = facade.get(url(query));
      await vi.waitFor(() => expect(upstream.requests).toHaveLength(1));
      pim.published = 'v2';
      expect((await purge(facade.origin)).status).toBe(200);
      expect(version(await facade.get(url(query)))).toBe('v2');
      expect(version(await before)).toBe('v1');
      expect(version(await facade.get(again))).toBe('v2');
    });

    it('a refill sent after one purge and answered after the next is not stored fresh', async () => {
      const pim = pimWith(1);
      const { upstream, facade } = await servers.start(pim.handler, { CACHE_ADMIN_TOKEN: TOKEN });
      expect(version(await facade.get(url(query)))).toBe('v1');
      pim.published = 'v2';
      expect((await purge(facade.origin)).status).toBe(200);
      const refill = facade.get(url(query));
      await vi.waitFor(() => expect(upstream.requests).toHaveLength(2));
      pim.published = 'v3';
      expect((await purge(facade.origin)).status).toBe(200);
      expect(version(await refill)).toBe('v2');
      expect(version(await facade.get(again))).toBe('v3');
    });

    it('a background refresh read before the purge is not served while revalidating after it', async () => {
      const pim = pimWith(1, 'max-age=1');
      const env = { CACHE_ADMIN_TOKEN: TOKEN, PIM_STALE_WHILE_REVALIDATE_MS: '60000' };
      const { upstream, facade } = await servers.start(pim.handler, env);
      expect(version(await facade.get(url(query)))).toBe('v1');
      // Past its second of freshness (the HTTP cache's copy too): served stale while one refresh goes out, and reads v1.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect((await facade.get(again)).body.extensions?.stale).toBeDefined();
      await vi.waitFor(() => expect(upstream.requests).toHaveLength(2));
      pim.published = 'v2';
      expect((await purge(facade.origin)).status).toBe(200);
      // The refresh lands with v1 (kept as last-known-good); whatever is asked after the purge gets v2, from the PIM.
      await vi.waitFor(() => expect(pim.slowAnswered).toBe(true), { timeout: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = await facade.get(url('{ third: catalogProducts(catalogId: "MASTER") }'));
      expect([after.body.data.third.data[0].version, after.body.extensions?.stale]).toEqual(['v2', undefined]);
    });
  });

  it('refuses a wrong or missing token with 401 and a bad body with 400, changing nothing', async () => {
    const { upstream, origin, get } = await start({ CACHE_ADMIN_TOKEN: TOKEN });
    const url = `/graphql?query=${encodeURIComponent(query)}`;
    await get(url);
    expect((await post(origin, '{"all":true}')).status).toBe(401);
    expect((await post(origin, '{"all":true}', `Bearer ${TOKEN}x`)).status).toBe(401);
    expect((await post(origin, '{"all":true}', TOKEN)).status).toBe(401);
    // Lone surrogates are valid JSON but no id: the tag's encoding threw where nothing caught it, and the process exited.
    const malformed = ['{"classificationId":"\\udc00"}', '{"catalogId":"a\\ud800"}'];
    for (const body of [
      '{"all":false}',
      '{"catalogId":""}',
      '{"catalogId":"A","all":true}',
      'not json',
      '[]',
      ...malformed,
    ]) {
      expect((await post(origin, body, `Bearer ${TOKEN}`)).status).toBe(400);
    }
    await get(url);
    expect(upstream.requests).toHaveLength(1);
  });

  it('does not exist without CACHE_ADMIN_TOKEN', async () => {
    const { origin } = await start({});
    expect((await post(origin, '{"all":true}', `Bearer ${TOKEN}`)).status).toBe(404);
  });

  it('is served on the metrics port, not the main one, when METRICS_PORT is set', async () => {
    const { origin, app } = await start({ CACHE_ADMIN_TOKEN: TOKEN, METRICS_PORT: '0' });
    expect((await post(origin, '{"all":true}', `Bearer ${TOKEN}`)).status).toBe(404);
    const metrics = createMetricsServer(app.metrics, '/metrics', app.invalidation?.handle);
    await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve));
    try {
      const metricsOrigin = `http://127.0.0.1:${(metrics.address() as AddressInfo).port}`;
      expect((await post(metricsOrigin, '{"all":true}', `Bearer ${TOKEN}`)).status).toBe(200);
      expect((await post(metricsOrigin, '{"all":true}')).status).toBe(401);
    } finally {
      metrics.close();
      metrics.closeAllConnections();
    }
  });
});
