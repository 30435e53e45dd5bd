import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { partsOf } from '../helpers/multipart.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// docs/integration.md: FEDERATION_MAX_REPRESENTATIONS "bounds the representations of one request, all its `_entities`
// fields together; an operation past it is refused whole ... before any of its fields calls the PIM".
// The allowance was counted with graphql-js' collectFields, which merges every node of a response key into one field;
// Yoga's executor (@graphql-tools/executor) runs each `@defer`red fragment as a group of its own, so one `_entities`
// field repeated under `... @defer` (or once plain and once deferred) resolved its representations once per copy,
// counted once: with a limit of 2, 3 copies of 2 representations resolved 6 and sent their calls.
const errorsOf = (text: string) =>
  partsOf(text).flatMap((part) => [...(part.errors ?? []), ...(part.incremental ?? []).flatMap((i) => i.errors ?? [])]);

const send = async (url: string, query: string, variables: unknown) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query, variables }),
  });
  return response.text();
};

const r = ['A', 'B'].map((catalogId) => ({ __typename: 'Catalog', catalogId }));

it.each([
  [
    'deferred inline fragments',
    `query($r: [_Any!]!) {
      ... @defer { x: _entities(representations: $r) { ... on Catalog { p1: products(pageSize: 1) } } }
      ... @defer { x: _entities(representations: $r) { ... on Catalog { p2: products(pageSize: 2) } } }
      ... @defer { x: _entities(representations: $r) { ... on Catalog { p3: products(pageSize: 3) } } }
    }`,
  ],
  [
    'a plain field and a deferred copy of it',
    `query($r: [_Any!]!) {
      x: _entities(representations: $r) { ... on Catalog { p1: products(pageSize: 1) } }
      ... @defer { x: _entities(representations: $r) { ... on Catalog { p2: products(pageSize: 2) } } }
    }`,
  ],
  [
    'a fragment spread deferred twice',
    `query($r: [_Any!]!) { ...F @defer(label: "a") ...F @defer(label: "b") }
     fragment F on Query { x: _entities(representations: $r) { ... on Catalog { products } } }`,
  ],
])('counts every copy the executor runs: %s', async (_name, query) => {
  const { upstream, facade } = await servers.start(echo, { PIM_CACHE: 'false', FEDERATION_MAX_REPRESENTATIONS: '2' });
  const text = await send(facade.url, query, { r });
  expect(errorsOf(text)).toContainEqual(
    expect.objectContaining({
      message: expect.stringMatching(/would pass the limit of 2 per request/),
      extensions: { code: 'BAD_USER_INPUT' },
    }),
  );
  expect(upstream.requests.map((request) => request.url)).toEqual([]);
});

it('still counts a field once when the document names it again without @defer, or with @defer(if: false)', async () => {
  const { upstream, facade } = await servers.start(echo, { PIM_CACHE: 'false', FEDERATION_MAX_REPRESENTATIONS: '2' });
  const text = await send(
    facade.url,
    `query($r: [_Any!]!) {
      x: _entities(representations: $r) { ... on Catalog { products } }
      ... on Query { x: _entities(representations: $r) { ... on Catalog { products } } }
      ... @defer(if: false) { x: _entities(representations: $r) { ... on Catalog { products } } }
      ...F ...F
    }
    fragment F on Query { x: _entities(representations: $r) { ... on Catalog { products } } }`,
    { r },
  );
  expect(errorsOf(text)).toEqual([]);
  expect(upstream.requests).toHaveLength(2);
});

// The directives' conditions come from variables too: the collection must see them as the executor does.
it('reads @defer(if:) and @skip(if:) from the variables', async () => {
  const { upstream, facade } = await servers.start(echo, { PIM_CACHE: 'false', FEDERATION_MAX_REPRESENTATIONS: '2' });
  const text = await send(
    facade.url,
    `query($r: [_Any!]!, $later: Boolean!, $skip: Boolean!) {
      x: _entities(representations: $r) { ... on Catalog { products } }
      ... @defer(if: $later) { x: _entities(representations: $r) { ... on Catalog { products } } }
      y: _entities(representations: $r) @skip(if: $skip) { ... on Catalog { products } }
    }`,
    { r, later: false, skip: true },
  );
  expect(errorsOf(text)).toEqual([]);
  expect(upstream.requests).toHaveLength(2);
});
