import type { IncomingMessage, ServerResponse } from 'node:http';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { startFacade, useFacade, type Answer } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startUpstream } from '../helpers/upstream.ts';

// The catalog id decides the upstream's answer: `fresh*` max-age=60, `short*` max-age=3, `broken*` a 500,
// `big*` a 20 KB body with max-age=60, `slow*` max-age=60 after 300 ms; anything else no caching headers.
function answer(req: IncomingMessage, res: ServerResponse) {
  const id = /catalogs\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
  if (id.startsWith('slow')) {
    const timer = setTimeout(() => answer({ url: req.url!.replace('slow', 'fresh') } as IncomingMessage, res), 300);
    return void res.once('close', () => clearTimeout(timer));
  }
  if (id.startsWith('broken')) return void res.writeHead(500).end();
  const lifetime = id.startsWith('short') ? 3 : /^(fresh|big)/.test(id) ? 60 : undefined;
  const headers = lifetime ? { 'cache-control': `max-age=${lifetime}` } : {};
  const pad = id.startsWith('big') ? 'x'.repeat(20_000) : '';
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, pad }] }));
}

const origin = 'https://shop.example';
const token = 'response-cache-admin-token';
const env = {
  RESPONSE_CACHE_MAX_BYTES: '1048576',
  PIM_CACHE_MAX_BYTES: '1048576',
  CORS_ORIGINS: origin,
  CACHE_ADMIN_TOKEN: token,
};
const fixture = useFacade(env, answer);
const query = 'query Products($id: ID!) { catalogProducts(catalogId: $id, pageSize: 10) }';
const getUrl = (id: string) =>
  `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id }))}`;
const get = (id: string, headers: Record<string, string> = {}) =>
  fixture.facade.get(getUrl(id), { 'x-api-key': 'alice', origin, ...headers });
const stats = () => fixture.facade.app.responses!.stats();

// Headers that differ between any two responses, cached or not.
const perResponse = new Set(['date', 'x-request-id']);
const headersOf = (answer: Answer) =>
  Object.fromEntries([...answer.headers].filter(([name]) => !perResponse.has(name)));

describe('cache of serialized results', () => {
  it('answers a repeat from the entry: no upstream call, the same bytes and headers, ETag and 304', async () => {
    const first = await get('fresh-1');
    const { hits } = stats();
    const second = await get('fresh-1');
    expect(first.body.errors).toBeUndefined();
    expect(fixture.upstream.requests).toHaveLength(1);
    expect(stats().hits).toBe(hits + 1);
    expect(second.text).toBe(first.text);
    // The lifetime is what the upstream answer has left: at most a second less on a slow machine.
    expect(first.headers.get('cache-control')).toBe('private, max-age=60');
    expect(second.headers.get('cache-control')).toMatch(/^private, max-age=(59|60)$/);
    expect({ ...headersOf(second), 'cache-control': '' }).toEqual({ ...headersOf(first), 'cache-control': '' });
    expect(second.headers.get('x-request-id')).toMatch(/./);
    expect(second.headers.get('access-control-allow-origin')).toBe(origin);
    // fetch() sends `Cache-Control: no-cache` with every conditional request: executed afresh, still a 304.
    const revalidated = await get('fresh-1', { 'if-none-match': second.headers.get('etag')! });
    expect(revalidated.status).toBe(304);
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('keeps the request log line and the operation span of a normal response; a batch is executed', async () => {
    const logs = captureLogs('info');
    const spans = new InMemorySpanExporter();
    const upstream = await startUpstream(answer);
    const env = { GRAPHQL_BATCHING: 'true' };
    const facade = await startFacade(upstream.url, env, { logger: logs.logger, extras: { spanExporter: spans } });
    try {
      for (let i = 0; i < 2; i++) await facade.get(getUrl('fresh-log'), { 'x-api-key': 'alice' });
      expect(facade.app.responses!.stats().hits).toBe(1);
      expect(upstream.requests).toHaveLength(1);
      // A span ends once its response is out, which may be after the client has read it.
      const named = () => spans.getFinishedSpans().filter((span) => span.name === 'query Products');
      await expect.poll(named).toHaveLength(2);
      const operation = { query, variables: { id: 'fresh-log' } };
      const batch = await facade.postBody([operation, operation], { 'x-api-key': 'alice' });
      expect(batch.body.map((result: { data: unknown }) => result.data)).toEqual([
        { catalogProducts: expect.anything() },
        { catalogProducts: expect.anything() },
      ]);
      // The limits of a request hold for a batch's operations together, which a hit would skip.
      expect(facade.app.responses!.stats().hits).toBe(1);
      const lines = logs.lines.filter((line) => line.msg === 'request completed');
      const { reqId: _, durationMs: __, time: ___, ...first } = lines[0]!;
      expect(first).toMatchObject({ method: 'GET', path: '/graphql', operations: ['query Products'], status: 200 });
      expect(lines[1]).toMatchObject(first);
      expect(lines[2]).toMatchObject({ operations: ['query Products', 'query Products'], status: 200 });
    } finally {
      await facade.close();
      await upstream.close();
    }
  });

  it('keeps the operation metrics of a normal response', async () => {
    const count = async () => {
      const { text } = await fixture.facade.get('/metrics');
      return Number(/graphql_operations_total\{[^}]*operation_name="Products"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    await get('fresh-2');
    const before = await count();
    const { hits } = stats();
    await get('fresh-2');
    expect(stats().hits).toBe(hits + 1);
    expect(await count()).toBe(before + 1);
  });

  // An operator sizing RESPONSE_CACHE_MAX_BYTES or asking whether the cache pays needs its hits and weight on /metrics.
  it('reports its hits, entries and bytes on /metrics', async () => {
    const scraped = async () => {
      const { text } = await fixture.facade.get('/metrics');
      const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
      return {
        hits: read('graphql_response_cache_hits_total'),
        entries: read('graphql_response_cache_entries'),
        bytes: read('graphql_response_cache_bytes'),
      };
    };
    await get('fresh-metrics');
    await get('fresh-metrics');
    expect(await scraped()).toEqual(stats());
    await get('fresh-metrics');
    const after = await scraped();
    expect(after).toEqual(stats());
    expect(after.hits).toBeGreaterThan(0);
    expect(after.bytes).toBeGreaterThan(0);
  });

  it('never gives one credential’s entry to another', async () => {
    const alice = await get('fresh-3');
    const { hits } = stats();
    const bob = await get('fresh-3', { 'x-api-key': 'bob' });
    expect(stats().hits).toBe(hits);
    expect(fixture.upstream.requests.map((r) => r.headers['x-api-key'])).toEqual(['alice', 'bob']);
    expect(bob.text).toBe(alice.text);
  });

  it('ends an entry with the freshness of the upstream answer behind it', async () => {
    const first = await get('short-1');
    expect(first.headers.get('cache-control')).toBe('private, max-age=3');
    const freshUntil = fixture.upstream.requests[0]!.at + 3_000;
    // Repeats until one reaches the upstream again; each answered without a call was sent while fresh.
    for (let i = 0; i < 100 && fixture.upstream.requests.length === 1; i++) {
      const sentAt = Date.now();
      await get('short-1');
      if (fixture.upstream.requests.length === 1) expect(sentAt).toBeLessThan(freshUntil);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(fixture.upstream.requests).toHaveLength(2);
  });

  it('stores no result with errors, no streamed (@defer) result, and passes by for Cache-Control: no-cache', async () => {
    const { entries, hits } = stats();
    await get('broken-1');
    const broken = await get('broken-1');
    expect(broken.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    expect(fixture.upstream.requests).toHaveLength(2);
    const deferred = `query Deferred($id: ID!) { ... @defer { catalogProducts(catalogId: $id) } }`;
    const accept = { accept: 'multipart/mixed', 'x-api-key': 'alice' };
    for (let i = 0; i < 2; i++) await fixture.facade.post(deferred, { id: 'fresh-4' }, accept);
    expect(stats()).toMatchObject({ entries, hits });
    const first = await get('fresh-5');
    const again = await get('fresh-5', { 'cache-control': 'no-cache' });
    expect(again.text).toBe(first.text);
    expect(stats().hits).toBe(hits);
  });

  it('never stores a result served from stale data (extensions.stale)', async () => {
    await get('short-2');
    fixture.upstream.respond((_req, res) => void res.writeHead(500).end());
    // Once the answer's freshness ends, the PIM fails and the last good answer is served, marked stale.
    for (let i = 0; i < 100 && !(await get('short-2')).body.extensions?.stale; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { hits, entries } = stats();
    const again = await get('short-2');
    expect(again.body.extensions.stale[0]).toMatchObject({ path: ['catalogProducts'], reason: 'UPSTREAM_ERROR' });
    expect(stats()).toMatchObject({ hits, entries });
  });

  it('drops the entries of a catalog on invalidation, and only those', async () => {
    await get('fresh-6');
    await get('fresh-7');
    const { hits } = stats();
    expect(fixture.facade.app.responses!.invalidate('catalog:fresh-6')).toBe(1);
    await get('fresh-6');
    await get('fresh-7');
    expect(stats().hits).toBe(hits + 1);
  });

  it('drops a search narrowed by a group alone on any classification’s invalidation', async () => {
    const byGroup = (id: string) =>
      fixture.facade.get(
        `/graphql?query=${encodeURIComponent(`{ catalogProducts(catalogId: "fresh-9", classificationGroupId: "${id}") }`)}`,
        { 'x-api-key': 'alice' },
      );
    await byGroup('G1');
    await get('fresh-10');
    const { hits } = stats();
    expect(fixture.facade.app.responses!.invalidate('classification:ETIM-9')).toBe(1);
    await byGroup('G1');
    await get('fresh-10');
    expect(stats().hits).toBe(hits + 1);
  });

  it('drops its entries when POST /cache/invalidate ends the freshness of the answers behind them', async () => {
    await get('fresh-8');
    const { hits } = stats();
    const invalidated = await fixture.facade.request('/cache/invalidate', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ catalogId: 'fresh-8' }),
    });
    expect(invalidated.status).toBe(200);
    await get('fresh-8');
    expect(stats().hits).toBe(hits);
    expect(fixture.upstream.requests).toHaveLength(2);
  });

  it('does not store a result whose data an invalidation ended while it ran', async () => {
    const pending = get('slow-1');
    for (let i = 0; i < 100 && fixture.upstream.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    fixture.facade.app.responses!.invalidate('catalog:slow-1');
    expect((await pending).body.errors).toBeUndefined();
    const { entries } = stats();
    await get('slow-1');
    expect(stats().entries).toBe(entries + 1);
  });

  it('stays within its byte bound under a flood of distinct queries', async () => {
    const bound = 2 ** 20;
    for (let i = 0; i < 150; i++) {
      const { body } = await get(`big-${i}`);
      expect(body.errors).toBeUndefined();
      expect(stats().bytes).toBeLessThanOrEqual(bound);
    }
    // 150 results of about 40 KB (as counted): the bound holds some twenty, the latest ones.
    expect(stats().bytes).toBeGreaterThan(bound / 2);
    expect(stats().entries).toBeLessThan(30);
    const { hits } = stats();
    await get('big-149');
    await get('big-0');
    expect(stats().hits).toBe(hits + 1);
  });
});

// A hit skipped the request's byte account: ten operations of a batch, each a hit on a result of 20 KB, sent
// 200 KB for a request allowed 64 KB (and slow readers held any number of such responses, past the process cap).
describe('a hit counts against the request’s upstream bytes', () => {
  it('as executing it would: past PIM_MAX_REQUEST_BYTES, the operations of a batch fail UPSTREAM_TOO_LARGE', async () => {
    const upstream = await startUpstream(answer);
    const facade = await startFacade(upstream.url, { GRAPHQL_BATCHING: 'true', PIM_MAX_REQUEST_BYTES: '65536' });
    try {
      const big = { query, variables: { id: 'big-batched' } };
      const filled = await facade.post(query, { id: 'big-batched' });
      expect(filled.body.errors).toBeUndefined();
      const response = await fetch(facade.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Array.from({ length: 10 }, () => big)),
      });
      const results = (await response.json()) as Array<{ errors?: Array<{ extensions: { code: string } }> }>;
      const refused = results.filter((r) => r.errors?.[0]?.extensions.code === 'UPSTREAM_TOO_LARGE');
      // 64 KB hold three answers of 20 KB: the first three are served, from the cache or not, the others refused.
      expect(results.length - refused.length).toBe(3);
      expect(refused).toHaveLength(7);
    } finally {
      await facade.close();
      await upstream.close();
    }
  });
});
