import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

let upstream: Upstream;
let facade: Facade;
/** The same app with every shape limit raised, to reach the limits behind the first ones. */
let loose: Facade;

beforeAll(async () => {
  upstream = await startUpstream();
  facade = await startFacade(upstream.url, { GRAPHQL_BATCHING: 'true' });
  loose = await startFacade(upstream.url, {
    GRAPHQL_MAX_TOKENS: '1000000',
    GRAPHQL_MAX_ALIASES: '5000',
    GRAPHQL_MAX_COST: '10000000',
  });
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  await Promise.all([facade.close(), loose.close()]);
  await upstream.close();
});

interface Outcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

// Apollo Client's default Accept: request errors are 400s under the GraphQL-over-HTTP spec.
const accept = 'application/graphql-response+json, application/json;q=0.9';

async function send(
  target: Facade,
  method: string,
  path: string,
  headers = {},
  body?: string | Readable,
): Promise<Outcome> {
  const response = await request(`${target.origin}${path}`, { method, headers, body });
  const text = await response.body.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, body: parsed };
}
/** POSTs a raw body to /graphql as JSON, the way every GraphQL client does. */
const postJson = (body: string | Readable, target = facade) =>
  send(target, 'POST', '/graphql', { 'content-type': 'application/json', accept }, body);
const gql = (query: string, variables?: object, target = facade) =>
  postJson(JSON.stringify({ query, variables }), target);

const repeat = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join(' ');
const deep = (levels: number) => `{ catalogProducts(catalogId: "a") ${'{ a '.repeat(levels)}${'}'.repeat(levels + 1)}`;

/** A check that one of the errors is this refusal, with its code. */
const refusedWith = (message: string) => (o: Outcome) =>
  expect(o.body.errors).toContainEqual(
    expect.objectContaining({ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
  );

// Each row: what is sent, the HTTP status, the error code (or a check), and how many upstream calls.
type Row = [string, () => Promise<Outcome>, number, string | ((o: Outcome) => void), number];

const rows: Row[] = [
  [
    'out-of-range Int literal',
    () => gql('{ catalogProducts(catalogId: "a", pageSize: 2147483648) }'),
    400,
    'GRAPHQL_VALIDATION_FAILED',
    0,
  ],
  [
    'pageSize over MAX_PAGE_SIZE',
    () => gql('{ catalogProducts(catalogId: "a", pageSize: 100000) }'),
    200,
    'BAD_USER_INPUT',
    0,
  ],
  ['negative page', () => gql('{ catalogProducts(catalogId: "a", page: -1) }'), 200, 'BAD_USER_INPUT', 0],
  ['5,000 levels of nesting', () => gql(deep(5_000)), 400, 'GRAPHQL_PARSE_FAILED', 0],
  [
    '5,000 levels under application/json is still a 400',
    () =>
      send(facade, 'POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query: deep(5_000) })),
    400,
    'GRAPHQL_PARSE_FAILED',
    0,
  ],
  ['5,000 levels past a raised token limit', () => gql(deep(5_000), undefined, loose), 400, 'GRAPHQL_PARSE_FAILED', 0],
  [
    '5,000 nested list brackets past a raised token limit',
    () => gql(`{ catalogProducts(catalogId: ${'['.repeat(5_000)}"a"${']'.repeat(5_000)}) }`, undefined, loose),
    400,
    'GRAPHQL_PARSE_FAILED',
    0,
  ],
  [
    '11 levels of nesting (depth limit)',
    () => gql(deep(10), undefined, loose),
    400,
    refusedWith('Query depth limit of 10 exceeded, found 11.'),
    0,
  ],
  [
    '1,000 aliases with different arguments',
    () => gql(`{ ${repeat(1_000, (i) => `a${i}: catalogProducts(catalogId: "c${i}")`)} }`),
    400,
    'GRAPHQL_PARSE_FAILED',
    0,
  ],
  [
    '100 aliases of __typename',
    () => gql(`{ ${repeat(100, (i) => `a${i}: __typename`)} }`),
    400,
    refusedWith('Aliases limit of 15 exceeded, found 100.'),
    0,
  ],
  [
    '1,000 aliases past the token limit',
    () =>
      gql(
        `{ ${repeat(1_000, (i) => `a${i}: catalogProducts(catalogId: "c${i}")`)} }`,
        undefined,
        facadeWith('aliases'),
      ),
    400,
    'GRAPHQL_VALIDATION_FAILED',
    0,
  ],
  [
    'aliases spread over fragments',
    () =>
      gql(
        `{ ...F0 ...F1 ...F2 ...F3 } ${repeat(4, (f) => `fragment F${f} on Query { ${repeat(5, (i) => `f${f}a${i}: __typename`)} }`)}`,
      ),
    400,
    refusedWith('Aliases limit of 15 exceeded, found 20.'),
    0,
  ],
  [
    '21 upstream fields (cost)',
    () =>
      gql(
        `{ ${repeat(21, (i) => `a${i}: classificationGroups(classificationId: "c${i}")`)} }`,
        undefined,
        facadeWith('cost'),
      ),
    400,
    (o) => expect(o.body.errors[0]).toMatchObject({ message: 'Query cost 2100 exceeds the limit of 2000' }),
    0,
  ],
  [
    'directive flood',
    () => gql(`{ __typename ${'@skip(if: false) '.repeat(60)}}`),
    400,
    'GRAPHQL_VALIDATION_FAILED',
    0,
  ],
  ['token flood', () => gql(`{ ${'__typename '.repeat(2_000)}}`), 400, 'GRAPHQL_PARSE_FAILED', 0],
  [
    'fragment cycle',
    () => gql('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A catalogProducts(catalogId: "a") }'),
    400,
    'GRAPHQL_VALIDATION_FAILED',
    0,
  ],
  [
    'fragment fan-out (each spreads the next twice, 30 deep)',
    () =>
      gql(
        `{ ...F0 } ${repeat(30, (i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`)} fragment F30 on Query { catalogProducts(catalogId: "a") }`,
      ),
    400,
    (o) => expect(o.body.errors[0].message).toMatch(/^Query cost \d+ exceeds the limit of 2000$/),
    0,
  ],
  [
    'deep fragment nesting (a chain of 60 spreads) runs, one call',
    () =>
      gql(
        `{ ...F0 } ${repeat(60, (i) => `fragment F${i} on Query { ...F${i + 1} }`)} fragment F60 on Query { catalogProducts(catalogId: "a") }`,
        undefined,
        loose,
      ),
    200,
    (o) => expect(o.body.errors).toBeUndefined(),
    1,
  ],
  [
    'batch of 11 operations (limit 10)',
    () => postJson(JSON.stringify(Array(11).fill({ query: '{ catalogProducts(catalogId: "a") }' }))),
    413,
    'REQUEST_TOO_LARGE',
    0,
  ],
  // Answered `200 []` before: a request of no operation is a malformed one.
  ['an empty batch', () => postJson('[]'), 400, 'BAD_REQUEST', 0],
  // graphql-js gives these no code; Apollo Server calls them BAD_USER_INPUT, and so do we (metrics said UNKNOWN).
  [
    'a variable of the wrong type',
    () => gql('query ($id: ID!) { catalogProducts(catalogId: $id) }', { id: { a: 1 } }),
    400,
    'BAD_USER_INPUT',
    0,
  ],
  [
    'a required variable left out',
    () => gql('query ($id: ID!) { catalogProducts(catalogId: $id) }'),
    400,
    'BAD_USER_INPUT',
    0,
  ],
  [
    // From a client that takes a stream (one that takes none is refused 406 before it runs).
    '@stream with a negative initialCount',
    () =>
      send(
        facade,
        'POST',
        '/graphql',
        { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' },
        JSON.stringify({
          query: 'query ($r: [_Any!]!) { _entities(representations: $r) @stream(initialCount: -1) { __typename } }',
          variables: { r: [{ __typename: 'Catalog', catalogId: 'a' }] },
        }),
      ),
    200,
    'BAD_USER_INPUT',
    0,
  ],
  [
    'batch with an item that is not an object',
    () => postJson('[null, { "query": "{ __typename }" }]'),
    200,
    (o) => {
      expect(o.body[0].errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(o.body[1]).toEqual({ data: { __typename: 'Query' } });
    },
    0,
  ],
  [
    'batch when batching is off (the default)',
    () => postJson(JSON.stringify(Array(2).fill({ query: '{ __typename }' })), loose),
    400,
    'BAD_REQUEST',
    0,
  ],
  [
    'body over 64 KiB',
    () => postJson(JSON.stringify({ query: '{ __typename }', pad: 'x'.repeat(70_000) })),
    413,
    (o) => expect(o.headers.connection).toBe('close'),
    0,
  ],
  [
    'chunked body without Content-Length',
    () =>
      // A stream of unknown length goes out chunked, without Content-Length.
      postJson(Readable.from(['{"query":"{ __typename }"}'])),
    411,
    (o) => expect(o.body.errors).toHaveLength(1),
    0,
  ],
  ['invalid JSON', () => postJson('{"query": "{ __typename }"'), 400, 'BAD_REQUEST', 0],
  ...(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'].map((type) => [
    `POST as ${type.split(';')[0]}`,
    () =>
      send(
        facade,
        'POST',
        '/graphql',
        { 'content-type': type },
        JSON.stringify({ query: '{ catalogProducts(catalogId: "a") }' }),
      ),
    415,
    (o: Outcome) => expect(o.body.errors[0].message).toMatch(/not accepted; send application\/json/),
    0,
  ]) as Row[]),
  [
    'mutation over GET',
    () => send(facade, 'GET', `/graphql?query=${encodeURIComponent('mutation { catalogProducts }')}`, { accept }),
    405,
    (o) => expect(o.headers.allow).toBe('POST'),
    0,
  ],
  [
    'header over 16 KiB',
    () => send(facade, 'GET', '/graphql', { 'x-padding': 'a'.repeat(20_000) }),
    431,
    () => undefined,
    0,
  ],
];

let aliasFacade: Facade;
let costFacade: Facade;
function facadeWith(kind: 'aliases' | 'cost'): Facade {
  return kind === 'aliases' ? aliasFacade : costFacade;
}

describe('hostile requests', () => {
  beforeAll(async () => {
    aliasFacade = await startFacade(upstream.url, { GRAPHQL_MAX_TOKENS: '1000000' });
    costFacade = await startFacade(upstream.url, { GRAPHQL_MAX_ALIASES: '100' });
  });
  afterAll(async () => {
    await Promise.all([aliasFacade.close(), costFacade.close()]);
  });

  it.each(rows)('%s', async (_name, act, status, expected, calls) => {
    const outcome = await act();
    expect(outcome.status).toBe(status);
    if (typeof expected === 'string')
      expect(outcome.body.errors.map((e: any) => e.extensions?.code)).toContain(expected);
    else expected(outcome);
    expect(upstream.requests).toHaveLength(calls);
  });

  it('1,000 distinct calls past every shape limit: only the first 50 are sent', async () => {
    const { status, body } = await gql(
      `{ ${repeat(1_000, (i) => `a${i}: catalogProducts(catalogId: "c${i}")`)} }`,
      undefined,
      loose,
    );
    expect(status).toBe(200);
    // Fields resolve in document order, so the first 50 aliases are the ones sent.
    const sent = Array.from({ length: 50 }, (_, i) => `/pxm/pimapi/v1/catalogs/c${i}/products/search`);
    expect(upstream.requests.map((r) => r.url).sort()).toEqual(sent.sort());
    expect(body.errors).toHaveLength(950);
    expect(body.errors.map((e: any) => e.path[0])).toEqual(Array.from({ length: 950 }, (_, i) => `a${i + 50}`));
    expect(new Set(body.errors.map((e: any) => e.extensions.code))).toEqual(new Set(['BAD_USER_INPUT']));
    expect(body.errors[0].message).toBe('This request needs more than 50 distinct catalog calls; split it up');
  });

  it('queries over GET keep working (urql sends queries as GET)', async () => {
    const query = encodeURIComponent('{ catalogProducts(catalogId: "a") }');
    const { status, body } = await send(facade, 'GET', `/graphql?query=${query}`, { accept });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(upstream.requests.map((r) => r.url)).toEqual(['/pxm/pimapi/v1/catalogs/a/products/search']);
  });
});
