import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

// The same requests against a façade with the cache of results and one without: a batch must be answered as
// executing it would, though each of its operations alone filled the cache. The limits of a request hold for its
// operations together, which a hit skipped.
const servers = closedAfterEach();
const alice = { 'x-api-key': 'alice' };

async function both(env: Record<string, string>, upstreamHandler = cacheableEcho(60)) {
  const upstream = await servers.startUpstream(upstreamHandler);
  const cached = await servers.startFacade(upstream.url, { ...env, GRAPHQL_BATCHING: 'true' });
  const plain = await servers.startFacade(upstream.url, {
    ...env,
    GRAPHQL_BATCHING: 'true',
    RESPONSE_CACHE_MAX_BYTES: '0',
  });
  return { cached, plain };
}

/** Sends each operation alone (filling the cache), then them all as one batch; returns each façade's batch answer. */
async function alonethenBatched(facades: Awaited<ReturnType<typeof both>>, operations: object[]) {
  const answers = [];
  for (const facade of [facades.plain, facades.cached]) {
    for (const operation of operations) expect((await facade.postBody(operation, alice)).body.errors).toBeUndefined();
    answers.push((await facade.postBody(operations, alice)).body);
  }
  expect(facades.cached.app.responses!.stats().entries).toBeGreaterThan(0);
  return answers as [Array<{ errors?: unknown[] }>, unknown];
}

describe('the cache of results and a batch (GRAPHQL_BATCHING)', () => {
  it('PIM_MAX_CALLS_PER_REQUEST counts every operation of the batch', async () => {
    const facades = await both({ PIM_MAX_CALLS_PER_REQUEST: '2' });
    const [executed, fromCache] = await alonethenBatched(facades, [
      { query: '{ a: catalogProducts(catalogId: "c1") b: catalogProducts(catalogId: "c2") }' },
      { query: '{ a: catalogProducts(catalogId: "c3") b: catalogProducts(catalogId: "c4") }' },
    ]);
    expect(executed[1]!.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(fromCache).toEqual(executed);
  });

  it('FEDERATION_MAX_REPRESENTATIONS counts every operation of the batch', async () => {
    const facades = await both({ FEDERATION_MAX_REPRESENTATIONS: '2' });
    const entities = {
      query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Catalog { products(pageSize: 1) } } }',
      variables: { r: [1, 2].map((n) => ({ __typename: 'Catalog', catalogId: `c${n}` })) },
    };
    const [executed, fromCache] = await alonethenBatched(facades, [entities, entities, entities]);
    expect(executed[1]!.errors?.[0]).toMatchObject({ message: expect.stringMatching(/limit of 2 per request/) });
    expect(fromCache).toEqual(executed);
  });

  it('PIM_MAX_REQUEST_BYTES counts the UTF-8 bytes of every operation of the batch', async () => {
    // 3,000 euro signs: 9 KB of UTF-8 in 3,000 characters, fresh for a minute.
    const facades = await both({ PIM_MAX_REQUEST_BYTES: '12000' }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
      res.end(JSON.stringify({ status: 200, meta: {}, data: [{ name: '€'.repeat(3_000) }] }));
    });
    const op = { query: '{ catalogProducts(catalogId: "euro") }' };
    const [executed, fromCache] = await alonethenBatched(facades, [op, op, op]);
    expect(executed[1]!.errors?.[0]).toMatchObject({ extensions: { code: 'UPSTREAM_TOO_LARGE' } });
    expect(fromCache).toEqual(executed);
  });
});
