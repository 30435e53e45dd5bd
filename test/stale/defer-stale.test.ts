import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { partsOf } from '../helpers/multipart.ts';
import { echo, faults, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// A field answered from last-known-good inside a @defer response is said to be stale, as it is in a plain one: the
// part that delivers it lists it in its extensions.
it('marks a stale field in a @defer response as stale (extensions.stale), as a plain response does', async () => {
  const { upstream, facade } = await servers.start(echo, { PIM_RETRIES: '0', PIM_TIMEOUT_MS: '500' });
  const plain = '{ a: catalogProducts(catalogId: "A") }';
  const deferred = '{ ... @defer { a: catalogProducts(catalogId: "A") } }';
  expect((await facade.post(plain)).body.errors).toBeUndefined();
  upstream.respond(faults.status(500));

  // The plain response: the kept answer, listed stale, no-store.
  const stale = await facade.post(plain);
  expect(stale.body.data.a.data[0].url).toContain('/A/');
  expect(stale.body.extensions.stale).toEqual([expect.objectContaining({ path: ['a'], reason: 'UPSTREAM_ERROR' })]);

  // The same kept answer inside a deferred part.
  const response = await fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query: deferred }),
  });
  const text = await response.text();
  expect(text).toContain('/A/');
  const parts = partsOf(text);
  expect(parts.flatMap((part) => part.extensions?.stale ?? [])).toEqual([
    expect.objectContaining({ path: ['a'], reason: 'UPSTREAM_ERROR' }),
  ]);
  expect(response.headers.get('cache-control')).toMatch(/no-store/);
});

// The part that lists a stale field is the one that delivers it, not whichever part goes out after it was read.
it('lists a deferred stale field in the part that delivers it, not in the initial part', async () => {
  let failing = false;
  // SLOW: the initial part's field, fresh, after 400 ms. B: the deferred field; failing, it is served stale at once.
  const handler: UpstreamHandler = (req, res) => {
    if (req.url!.includes('/SLOW/')) return void setTimeout(() => echo(req, res), 400);
    if (failing) return void res.writeHead(500).end();
    echo(req, res);
  };
  const { facade } = await servers.start(handler, { PIM_RETRIES: '0', PIM_CACHE: 'false' });
  expect((await facade.post('{ b: catalogProducts(catalogId: "B") }')).body.errors).toBeUndefined();
  failing = true;
  const response = await fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({
      query: '{ slow: catalogProducts(catalogId: "SLOW") ... @defer { b: catalogProducts(catalogId: "B") } }',
    }),
  });
  const parts = partsOf(await response.text());
  const initial = parts.find((part) => part.data)!;
  const deferred = parts.find((part) => JSON.stringify(part.incremental ?? []).includes('/B/'))!;
  expect(initial.extensions?.stale).toBeUndefined();
  expect(deferred.extensions?.stale).toEqual([expect.objectContaining({ path: ['b'], reason: 'UPSTREAM_ERROR' })]);
});

// `_entities` is the schema's only list field, so the only one @stream applies to. A stale entity field must be listed
// in the part that delivers its entity, as a @defer part lists its own.
it('lists a stale entity field in the @stream part that delivers its entity', async () => {
  let failing = false;
  const handler: UpstreamHandler = (req, res) => {
    if (req.url!.includes('/SLOW')) return void setTimeout(() => echo(req, res), 400);
    if (failing) return void res.writeHead(500).end();
    echo(req, res);
  };
  const { facade } = await servers.start(handler, { PIM_RETRIES: '0', PIM_CACHE: 'false' });
  const group = (id: string) => ({
    __typename: 'ClassificationGroup',
    classificationId: 'C',
    classificationGroupId: id,
  });
  const query =
    'query($r: [_Any!]!) { _entities(representations: $r) @stream(initialCount: 0) { ... on ClassificationGroup { group } } }';
  expect(
    (await facade.post(query.replace(' @stream(initialCount: 0)', ''), { r: [group('A')] })).body.errors,
  ).toBeUndefined();
  failing = true;
  const response = await fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query, variables: { r: [group('A'), group('SLOW')] } }),
  });
  const parts = partsOf(await response.text());
  const deliversA = parts.find((part) => JSON.stringify(part.incremental ?? []).includes('/groups/A'))!;
  expect(deliversA).toBeDefined();
  expect(JSON.stringify(deliversA.incremental)).not.toContain('/groups/SLOW');
  expect(deliversA.extensions?.stale).toEqual([
    expect.objectContaining({ path: ['_entities', 0, 'group'], reason: 'UPSTREAM_ERROR' }),
  ]);
});
