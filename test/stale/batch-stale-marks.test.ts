import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';
import { answerFor } from '../stale/reads.ts';

const servers = closedAfterEach();

// docs/operations.md, Stale answers: "each stale field is listed in the response's extensions.stale (path, age in
// seconds, reason)". In a batch (GRAPHQL_BATCHING=true) each operation is its own response in the array, with its
// own data and paths. The list of stale fields belongs to the HTTP request (src/pim/loaders.ts), so an operation that
// read nothing stale is told that a field of another operation is stale, at a path its own data does not have, and
// an operation whose field is stale may not be told at all.
it('a batch: each operation lists its own stale fields, and only those', async () => {
  let down = false;
  const handler: UpstreamHandler = (req, res) => {
    if (down && req.url!.includes('/STALE/')) return void res.writeHead(500).end('{"error":"down"}');
    answerFor('v1')(req, res);
  };
  const { facade } = await servers.start(handler, {
    GRAPHQL_BATCHING: 'true',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
    PIM_CACHE: 'false',
  });
  const stale = '{ a: catalogProducts(catalogId: "STALE") }';
  const fresh = '{ b: catalogProducts(catalogId: "FRESH") }';
  expect((await facade.post(stale)).body.errors).toBeUndefined();
  down = true;

  for (const batch of [
    [{ query: fresh }, { query: stale }],
    [{ query: stale }, { query: fresh }],
  ]) {
    const { status, body } = await facade.postBody(batch);
    expect(status).toBe(200);
    const byField = Object.fromEntries(body.map((result: any) => [Object.keys(result.data)[0], result]));
    expect(byField.a.data.a.data[0].version).toBe('v1');
    expect(byField.a.extensions?.stale).toEqual([expect.objectContaining({ path: ['a'], reason: 'UPSTREAM_ERROR' })]);
    expect(byField.b.errors).toBeUndefined();
    expect(byField.b.extensions?.stale).toBeUndefined();
  }
});
