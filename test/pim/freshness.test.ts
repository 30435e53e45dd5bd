import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPimClient, type PimClient } from '../../src/pim/client.ts';
import { createPimApi } from '../../src/pim/loaders.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

// Each classification id answers with its own Cache-Control (and Age) header.
const headersById: Record<string, Record<string, string>> = {
  public: { 'cache-control': 'public, max-age=60, s-maxage=120' },
  aged: { 'cache-control': 'max-age=60', age: '50' },
  private: { 'cache-control': 'private, max-age=30' },
  nostore: { 'cache-control': 'no-store, max-age=60' },
  none: {},
  // RFC 9111 §4.2.1: of a directive given twice, the first counts (or the answer is stale); undici takes 0 here.
  twice: { 'cache-control': 'max-age=0, max-age=60' },
  // §1.2.2: a lifetime past 2^31 seconds is 2^31 seconds, which a header can still say in digits.
  huge: { 'cache-control': `max-age=${'9'.repeat(25)}` },
  // §4.1: `Vary: *` never matches a later request, so the answer cannot be reused by anyone.
  varyall: { 'cache-control': 'max-age=60', vary: '*' },
  // §5.1: Age is a non-negative number of seconds; a negative one is ignored, not taken off.
  negative: { 'cache-control': 'max-age=60', age: '-100000' },
};

let upstream: Upstream;
let client: PimClient;

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    const id = /classifications\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? 'none';
    if (id === 'missing')
      return res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"status":404,"error":"No Products found"}');
    res.writeHead(200, { 'content-type': 'application/json', ...headersById[id] });
    res.end(JSON.stringify({ data: [{ id }] }));
  });
  client = createPimClient({
    baseUrl: upstream.url,
    connectTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    maxConcurrency: 4,
    maxConcurrencyPerCredential: 2,
    credentialHeaders: ['x-api-key'],
    coalesce: true,
    cache: false,
    maxBodyBytes: 2 ** 20,
    byteLimits: { maxRequestBytes: 2 ** 20, maxInflightBytes: 2 ** 21, maxInflightBytesPerCredential: 2 ** 21 },
    resilience: { retries: 0, retryBaseMs: 10, breakerThreshold: 10, halfOpenAfterMs: 1_000 },
    probe: { limits: { maxPageSize: 100, maxIdLength: 128 }, headers: {} },
  });
});
afterAll(async () => {
  await client.close();
  await upstream.close();
});

const api = () =>
  createPimApi({
    client,
    headers: { 'x-api-key': 'k' },
    limits: { maxPageSize: 10, maxIdLength: 64 },
    deadline: Date.now() + 5_000,
    bytes: client.openByteAccount('test'),
    maxCalls: 10,
  });
const groups = (pim: ReturnType<typeof api>, classificationId: string) =>
  pim.listClassificationGroups({ classificationId });

describe('the freshness of the answers a request used', () => {
  it.each([
    ['public', { maxAgeS: 60, sharedMaxAgeS: 120, shared: true }],
    ['aged', { maxAgeS: 10, sharedMaxAgeS: 10, shared: true }],
    ['private', { maxAgeS: 30, sharedMaxAgeS: 0, shared: false }],
    ['nostore', { maxAgeS: 0, sharedMaxAgeS: 0, shared: false }],
    ['none', { maxAgeS: 0, sharedMaxAgeS: 0, shared: false }],
    ['twice', { maxAgeS: 0, sharedMaxAgeS: 0, shared: true }],
    ['huge', { maxAgeS: 2 ** 31, sharedMaxAgeS: 2 ** 31, shared: true }],
    ['varyall', { maxAgeS: 0, sharedMaxAgeS: 0, shared: false }],
    ['negative', { maxAgeS: 60, sharedMaxAgeS: 60, shared: true }],
  ])('%s', async (id, expected) => {
    const pim = api();
    expect(pim.freshness()).toBeUndefined();
    expect(await groups(pim, id)).toEqual({ data: [{ id }] });
    expect(pim.freshness()).toEqual(expected);
  });

  it('is the least of every answer, DataLoader hits and failures included', async () => {
    const pim = api();
    await Promise.all([groups(pim, 'public'), groups(pim, 'aged'), groups(pim, 'public')]);
    expect(pim.freshness()).toEqual({ maxAgeS: 10, sharedMaxAgeS: 10, shared: true });
    await groups(pim, 'private');
    expect(pim.freshness()).toEqual({ maxAgeS: 10, sharedMaxAgeS: 0, shared: false });
    await expect(groups(pim, 'missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(pim.freshness()).toEqual({ maxAgeS: 0, sharedMaxAgeS: 0, shared: false });
  });

  it('gives every coalesced waiter the same answer', async () => {
    upstream.requests.length = 0;
    const request = {
      operation: 'listClassificationGroups',
      template: 't',
      path: '/pxm/pimapi/v1/classifications/public/groups',
    } as const;
    const call = { headers: { 'x-api-key': 'k' }, deadline: Date.now() + 5_000, bytes: client.openByteAccount('test') };
    const [a, b] = await Promise.all([client.get(request, call), client.get(request, call)]);
    expect(a).toBe(b);
    expect(a.freshness).toEqual({ maxAgeS: 60, sharedMaxAgeS: 120, shared: true });
    expect(upstream.requests).toHaveLength(1);
  });
});
