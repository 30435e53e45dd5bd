import { print } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { EntitiesDocument, type EntitiesQuery } from '../../examples/gql/graphql.ts';
import { catalogResult, type ProductRecord } from '../../src/types/catalog.ts';
import { startDemoUpstream, type DemoUpstream } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// `_entities` as a gateway calls it: one operation, the references as a variable.
const entities = (selection: string) =>
  `query Entities($representations: [_Any!]!) { _entities(representations: $representations) { __typename ${selection} } }`;
const group = (classificationGroupId: string, classificationId = 'LIFESTYLE-DEMO') => ({
  __typename: 'ClassificationGroup',
  classificationId,
  classificationGroupId,
});
const withoutPlace = ({ path: _path, locations: _locations, ...error }: Record<string, unknown>) => error;

let upstream: DemoUpstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startDemoUpstream();
  // No HTTP cache: every call the façade sends reaches the recording upstream, so counts are DataLoader's.
  facade = await startFacade(upstream.url, { PIM_CACHE: 'false', MAX_ID_LENGTH: '64' });
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const resolve = async (selection: string, representations: unknown[]) =>
  (await facade.post(entities(selection), { representations })).body;

describe('_entities, as a gateway calls it', () => {
  it('resolves references from their keys alone, without an upstream call', async () => {
    const body = await resolve('... on Catalog { catalogId } ... on ClassificationGroup { classificationGroupId }', [
      { __typename: 'Catalog', catalogId: 'MACHINERY' },
      { __typename: 'Classification', classificationId: 'ECLASS-DEMO', ignored: { deep: true } },
      group('LS-010000'),
      // An integer is an ID too, as an argument would be.
      { __typename: 'Catalog', catalogId: 42 },
    ]);
    expect(body).toEqual({
      data: {
        _entities: [
          { __typename: 'Catalog', catalogId: 'MACHINERY' },
          { __typename: 'Classification' },
          { __typename: 'ClassificationGroup', classificationGroupId: 'LS-010000' },
          { __typename: 'Catalog', catalogId: '42' },
        ],
      },
    });
    expect(upstream.requests).toEqual([]);
  });

  it('answers each entity field with the JSON of its root field, through the same loader', async () => {
    const pairs = [
      [
        'catalogProducts(catalogId: "MACHINERY", classificationGroupId: "MC-050200", sorting: "-productId", pageSize: 2)',
        { __typename: 'Catalog', catalogId: 'MACHINERY' },
        '... on Catalog { value: products(classificationGroupId: "MC-050200", sorting: "-productId", pageSize: 2) }',
      ],
      [
        'classificationGroups(classificationId: "ECLASS-DEMO", languageId: "de", page: 1, pageSize: 3)',
        { __typename: 'Classification', classificationId: 'ECLASS-DEMO' },
        '... on Classification { value: groups(languageId: "de", page: 1, pageSize: 3) }',
      ],
      [
        'classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "MC-050200", levels: 1)',
        { __typename: 'Classification', classificationId: 'ECLASS-DEMO' },
        '... on Classification { value: group(classificationGroupId: "MC-050200", levels: 1) }',
      ],
      [
        'classificationGroup(classificationId: "LIFESTYLE-DEMO", classificationGroupId: "LS-010000", levels: 0, languageId: "en")',
        group('LS-010000'),
        '... on ClassificationGroup { value: group(levels: 0, languageId: "en") }',
      ],
      [
        'catalogProducts(catalogId: "LIFESTYLE", classificationGroupClassificationId: "LIFESTYLE-DEMO", classificationGroupId: "LS-010000", pageSize: 3)',
        group('LS-010000'),
        '... on ClassificationGroup { value: products(catalogId: "LIFESTYLE", pageSize: 3) }',
      ],
    ] as const;
    for (const [root, representation, selection] of pairs) {
      upstream.reset();
      // Both in one request: the entity field's call is the root field's, so it is sent once.
      const { body } = await facade.post(
        `query($representations: [_Any!]!) {
        root: ${root}
        _entities(representations: $representations) { ${selection} }
      }`,
        { representations: [representation] },
      );
      expect(body.errors, root).toBeUndefined();
      expect(body.data.root.status, root).toBe(200);
      expect(body.data._entities[0].value, root).toEqual(body.data.root);
      expect(upstream.requests, root).toHaveLength(1);
    }
  });

  it('sends one upstream call per distinct request: 100 representations of 10 groups make 10 calls', async () => {
    const ids = ['LS-010000', 'LS-010100', 'LS-010200', 'LS-010201', 'LS-010202'];
    const distinct = [...ids.map((id) => group(id)), ...ids.map((id) => group(id.replace('LS-01', 'LS-02')))];
    const representations = Array.from({ length: 100 }, (_, i) => distinct[i % 10]);
    const body = await resolve('... on ClassificationGroup { group(languageId: "en") }', representations);
    expect(body.errors).toBeUndefined();
    expect(body.data._entities).toHaveLength(100);
    expect(body.data._entities[37].group).toEqual(body.data._entities[7].group);
    expect(body.data._entities[7].group.data[0].classificationGroupId).toBe('LS-020200');
    expect(new Set(upstream.requests.map((r) => r.url)).size).toBe(10);
    expect(upstream.requests).toHaveLength(10);
  });

  it('gives a missing group null with the NOT_FOUND of the root field, at its path, while its neighbours resolve', async () => {
    const body = await resolve('... on ClassificationGroup { group }', [
      group('LS-010000'),
      group('LS-NOPE'),
      group('LS-020000'),
    ]);
    const root = (
      await facade.post('{ classificationGroup(classificationId: "LIFESTYLE-DEMO", classificationGroupId: "LS-NOPE") }')
    ).body;
    expect(body.data._entities[0].group.data[0].classificationGroupId).toBe('LS-010000');
    expect(body.data._entities[1]).toEqual({ __typename: 'ClassificationGroup', group: null });
    expect(body.data._entities[2].group.data[0].classificationGroupId).toBe('LS-020000');
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({ path: ['_entities', 1, 'group'], extensions: { code: 'NOT_FOUND' } });
    expect(withoutPlace(body.errors[0])).toEqual(withoutPlace(root.errors[0]));
  });

  it('refuses representations of the wrong shape one by one, at their own path, before any call', async () => {
    const body = await resolve('... on ClassificationGroup { group }', [
      'LS-010000',
      ['LS-010000'],
      { __typename: 'ClassificationGroup', classificationId: 'LIFESTYLE-DEMO' },
      { __typename: 'ClassificationGroup', classificationId: 'LIFESTYLE-DEMO', classificationGroupId: { id: 'x' } },
      { __typename: 'ClassificationGroup', classificationId: 'LIFESTYLE-DEMO', classificationGroupId: 1.5 },
      { __typename: 'ClassificationGroup', classificationId: 'LIFESTYLE-DEMO', classificationGroupId: '' },
      group('LS-010000'),
    ]);
    expect(body.data._entities.slice(0, 6)).toEqual([null, null, null, null, null, null]);
    expect(body.data._entities[6].group.status).toBe(200);
    expect(body.errors.map((e: any) => [e.path, e.extensions.code])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [['_entities', i], 'BAD_USER_INPUT']),
    );
    expect(body.errors[0].message).toBe(
      'Representation 0 must be an object whose __typename is one of Catalog, Classification, ClassificationGroup',
    );
    expect(body.errors[2].message).toBe(
      'A ClassificationGroup representation needs "classificationGroupId" as a non-empty ID string',
    );
    expect(upstream.requests).toHaveLength(1);
  });

  it('refuses an unknown __typename, at its path, while the others resolve', async () => {
    const body = await resolve('... on Catalog { catalogId }', [
      { __typename: 'Product', catalogId: 'MACHINERY' },
      { __typename: 'Query' },
      { __typename: 'JSON' },
      { catalogId: 'MACHINERY' },
      { __typename: 'Catalog', catalogId: 'MACHINERY' },
    ]);
    expect(body.data._entities).toEqual([null, null, null, null, { __typename: 'Catalog', catalogId: 'MACHINERY' }]);
    expect(body.errors.map((e: any) => [e.path, e.extensions.code, e.message])).toEqual(
      [0, 1, 2, 3].map((i) => [
        ['_entities', i],
        'BAD_USER_INPUT',
        `Representation ${i} must be an object whose __typename is one of Catalog, Classification, ClassificationGroup`,
      ]),
    );
  });

  it('checks the ids of a reference like arguments: an over-long one fails its fields with nothing sent', async () => {
    const long = 'L'.repeat(65);
    const body = await resolve(
      '... on ClassificationGroup { classificationGroupId group products(catalogId: "LIFESTYLE") }',
      [group(long), group('LS-01\u0000')],
    );
    const root = (
      await facade.post(`{ classificationGroup(classificationId: "LIFESTYLE-DEMO", classificationGroupId: "${long}") }`)
    ).body;
    expect(body.data._entities[0]).toEqual({
      __typename: 'ClassificationGroup',
      classificationGroupId: long,
      group: null,
      products: null,
    });
    expect(body.errors.map((e: any) => [e.path.join('.'), e.extensions.code])).toEqual([
      ['_entities.0.group', 'BAD_USER_INPUT'],
      ['_entities.0.products', 'BAD_USER_INPUT'],
      ['_entities.1.group', 'BAD_USER_INPUT'],
      ['_entities.1.products', 'BAD_USER_INPUT'],
    ]);
    expect(body.errors[0].message).toBe(
      'Invalid argument "classificationGroupId": must be at most 64 characters, got 65',
    );
    expect(withoutPlace(body.errors[0])).toEqual(withoutPlace(root.errors[0]));
    expect(upstream.requests).toEqual([]);
  });

  it('refuses a batch over FEDERATION_MAX_REPRESENTATIONS (100), counted over the whole request', async () => {
    const body = await resolve(
      '... on ClassificationGroup { group }',
      Array.from({ length: 101 }, () => group('LS-010000')),
    );
    expect(body).toMatchObject({
      data: null,
      errors: [
        {
          path: ['_entities'],
          message: '101 more entity representations would pass the limit of 100 per request; split the batch',
          extensions: { code: 'BAD_USER_INPUT' },
        },
      ],
    });
    // A gateway's batched fetch is one operation with aliased `_entities` fields: together they count.
    const sixty = Array.from({ length: 60 }, () => group('LS-010000'));
    const { body: aliased } = await facade.post(
      `query($a: [_Any!]!, $b: [_Any!]!) { a: _entities(representations: $a) { __typename } b: _entities(representations: $b) { __typename } }`,
      { a: sixty, b: sixty },
    );
    expect(aliased.data).toBeNull();
    expect(aliased.errors).toMatchObject([{ extensions: { code: 'BAD_USER_INPUT' } }]);
    expect(upstream.requests).toEqual([]);
  });

  // Hive Gateway merges concurrent entity fetches into one operation of aliased `_entities` fields. Counted field by
  // field, the first sent its calls before the second was refused, whose null (`_entities` is non-null) then took
  // the whole answer: 10 calls went out for nothing, and the gateway's client saw unexpected errors.
  it("takes an operation's representations together, before any of its fields calls the PIM", async () => {
    const sixty = Array.from({ length: 60 }, (_, i) => group(`LS-0${i % 10}0000`));
    const { body } = await facade.post(
      `query($a: [_Any!]!, $b: [_Any!]!) { a: _entities(representations: $a) { ... on ClassificationGroup { group } } b: _entities(representations: $b) { __typename } }`,
      { a: sixty, b: sixty },
    );
    expect(body).toEqual({
      data: null,
      errors: [
        {
          message: '120 more entity representations would pass the limit of 100 per request; split the batch',
          path: ['a'],
          locations: expect.any(Array),
          extensions: { code: 'BAD_USER_INPUT' },
        },
      ],
    });
    expect(upstream.requests).toEqual([]);
    // Fields the operation skips are not counted; literal lists are.
    const { body: skipped } = await facade.post(
      `query($a: [_Any!]!) { a: _entities(representations: $a) { __typename } b: _entities(representations: $a) @skip(if: true) { __typename } c: _entities(representations: [{ __typename: "Catalog", catalogId: "MACHINERY" }]) { __typename } }`,
      { a: sixty },
    );
    expect(skipped.errors).toBeUndefined();
    expect(skipped.data.a).toHaveLength(60);
    // Fields of one response key run once, however often the document names them.
    const { body: merged } = await facade.post(
      `query($a: [_Any!]!) { x: _entities(representations: $a) { __typename } ...F ... on Query { x: _entities(representations: $a) { __typename } } } fragment F on Query { x: _entities(representations: $a) { __typename } }`,
      { a: sixty },
    );
    expect(merged.errors).toBeUndefined();
    expect(merged.data.x).toHaveLength(60);
  });

  // Hive Gateway's merged fetch names each `_entities` `_v<n>__entities`: 16 fetches were refused whole by the
  // alias limit (15), though the same fields sent as root fields passed. Its representations are bounded above.
  it('does not count the aliases of _entities against GRAPHQL_MAX_ALIASES', async () => {
    const fields = Array.from(
      { length: 16 },
      (_, i) => `_v${i}__entities: _entities(representations: $r) { __typename }`,
    ).join(' ');
    const { status, body } = await facade.post(`query($r: [_Any!]!) { ${fields} }`, {
      r: [{ __typename: 'Catalog', catalogId: 'MACHINERY' }],
    });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(Object.keys(body.data)).toHaveLength(16);
  });
});

it('answers the client document examples/entities.graphql, typed by codegen and narrowed by catalogResult', async () => {
  const variables = { catalogId: 'LIFESTYLE', groupId: 'LS-010000', languageId: 'en' };
  const representations = [
    { __typename: 'Catalog', catalogId: 'LIFESTYLE' },
    { __typename: 'Classification', classificationId: 'LIFESTYLE-DEMO' },
    group('LS-010000'),
  ];
  const { body } = await facade.post(print(EntitiesDocument), { ...variables, representations });
  expect(body.errors).toBeUndefined();
  const [catalog, classification, lsGroup] = (body.data as EntitiesQuery)._entities;
  if (catalog?.__typename !== 'Catalog' || classification?.__typename !== 'Classification') throw new Error('order');
  if (lsGroup?.__typename !== 'ClassificationGroup') throw new Error('order');
  const products = catalogResult('Catalog.products', catalog.products);
  expectTypeOf(products!.data[0]).toEqualTypeOf<ProductRecord | undefined>();
  expect(catalogResult('ClassificationGroup.products', lsGroup.products)).toEqual(products);
  expect(catalogResult('Classification.group', classification.group)).toEqual(
    catalogResult('ClassificationGroup.group', lsGroup.group),
  );
  expect(catalogResult('Classification.groups', classification.groups)!.meta.paging!.per_page).toBe(5);
  expect(products!.data.every((p) => p.catalogId === 'LIFESTYLE')).toBe(true);
});

describe('limits count entity fields', () => {
  let limited: Facade;
  beforeAll(async () => {
    limited = await startFacade(upstream.url, {
      PIM_CACHE: 'false',
      PIM_MAX_CALLS_PER_REQUEST: '3',
      GRAPHQL_MAX_COST: '250',
    });
  });
  afterAll(() => limited?.close());

  it('the per-request call cap: calls past it fail with BAD_USER_INPUT, unsent', async () => {
    const representations = ['LS-010000', 'LS-020000', 'LS-030000', 'LS-040000', 'LS-010100'].map((id) => group(id));
    const { body } = await limited.post(entities('... on ClassificationGroup { group }'), { representations });
    expect(body.data._entities.filter((e: any) => e.group?.status === 200)).toHaveLength(3);
    expect(body.errors).toHaveLength(2);
    expect(body.errors[0]).toMatchObject({
      message: 'This request needs more than 3 distinct catalog calls; split it up',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(upstream.requests).toHaveLength(3);
  });

  it('the cost rule: each entity field that calls the PIM costs what a root field costs', async () => {
    // Through a named fragment and an inline one: each is priced on its own type.
    const fragment = 'fragment G on ClassificationGroup { group products(catalogId: "LIFESTYLE") }';
    const query = `${entities('...G ... on Catalog { products }')} ${fragment}`;
    const { status, body } = await limited.post(query, { representations: [group('LS-010000')] });
    expect(status).toBe(400);
    // Three PIM fields at 100 each, plus `_entities` and `__typename` at 1.
    expect(body.errors[0]).toMatchObject({
      message: 'Query cost 302 exceeds the limit of 250',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    expect(upstream.requests).toEqual([]);
  });
});
