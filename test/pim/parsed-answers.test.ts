import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPimClient, type PimClient } from '../../src/pim/client.ts';
import { buildRequest } from '../../src/pim/rest/endpoints.ts';
import type { Layer } from '../../src/pim/rest/types.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

// Each classification id is its own URL; `brief` answers max-age=2, every other one max-age=60.
let upstream: Upstream;
let client: PimClient;
// Every call that gets past the parsed answers reaches the telemetry layer, cache hit or not.
let attempts = 0;
const counting: Layer = (next) => (request, call) => (attempts++, next(request, call));

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    const id = /classifications\/([^/?]+)/.exec(req.url ?? '')?.[1];
    const maxAge = id === 'brief' ? 2 : 60;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': `max-age=${maxAge}` });
    res.end(JSON.stringify({ data: [{ id, nested: { tags: ['a'] } }] }));
  });
  client = createPimClient({
    baseUrl: upstream.url,
    connectTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    maxConcurrency: 4,
    maxConcurrencyPerCredential: 4,
    credentialHeaders: ['x-api-key'],
    coalesce: false,
    cache: {
      defaultTtlMs: 0,
      redisUrl: undefined,
      redisTimeoutMs: 200,
      missAfterFailureMs: 20_000,
      maxBytes: 2 ** 20,
      redisMaxBytes: 2 ** 20,
      maxEntryBytes: 2 ** 20,
      onError: () => {},
    },
    telemetry: counting,
    maxBodyBytes: 2 ** 20,
    byteLimits: { maxRequestBytes: 2 ** 22, maxInflightBytes: 2 ** 22, maxInflightBytesPerCredential: 2 ** 22 },
    resilience: { retries: 0, retryBaseMs: 10, breakerThreshold: 10, halfOpenAfterMs: 1_000 },
    probe: { limits: { maxPageSize: 100, maxIdLength: 128 }, headers: {} },
  });
});
afterAll(async () => {
  await client.close();
  await upstream.close();
});
beforeEach(() => {
  attempts = 0;
  upstream.reset();
});

const get = async (classificationId: string, headers: Record<string, string> = { 'x-api-key': 'alice' }) => {
  const request = buildRequest('listClassificationGroups', { classificationId }, { maxPageSize: 10, maxIdLength: 64 });
  const bytes = client.openByteAccount('test');
  const answer = await client.get(request, { headers, deadline: Date.now() + 5_000, bytes });
  bytes.release();
  return answer.body as { data: Array<{ id: string; nested: { tags: string[] } }> };
};

describe('fresh answers kept parsed', () => {
  it('serves a repeat with the same frozen body, past every layer and without the upstream', async () => {
    await get('shared'); // a miss: the HTTP cache stores the response
    const kept = await get('shared'); // an HTTP cache hit: parsed once more, then kept
    expect(attempts).toBe(2);
    const again = await get('shared');
    const andAgain = await get('shared');
    expect(again).toBe(kept);
    expect(andAgain).toBe(kept);
    expect(attempts).toBe(2);
    expect(upstream.requests).toHaveLength(1);
    expect(Object.isFrozen(kept.data[0]!.nested.tags)).toBe(true);
    expect(() => kept.data[0]!.nested.tags.push('b')).toThrow(TypeError);
  });

  it('keeps them per credential', async () => {
    await get('private');
    const alice = await get('private');
    const bob = await get('private', { 'x-api-key': 'bob' });
    expect(bob).not.toBe(alice);
    expect(upstream.requests.map((r) => r.headers['x-api-key'])).toEqual(['alice', 'bob']);
  });

  it('lets a no-cache call past them, to the HTTP cache and the upstream', async () => {
    await get('probe');
    await get('probe');
    attempts = 0;
    await get('probe', { 'x-api-key': 'alice', 'cache-control': 'no-cache' });
    expect(attempts).toBe(1);
    expect(upstream.requests).toHaveLength(2);
  });

  it('stops serving an answer once its response is stale', async () => {
    await get('brief');
    const kept = await get('brief');
    expect(await get('brief')).toBe(kept);
    await vi.waitFor(async () => expect(await get('brief')).not.toBe(kept), { timeout: 4_000, interval: 50 });
    expect(upstream.requests).toHaveLength(2);
  });
});
