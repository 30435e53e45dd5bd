import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// test/ecosystem/entity-key-literals.test.ts: a representation's key written as a Float or enum literal is refused at
// its index, as an ID argument is (`catalogId: 1.0000000000000001` had read catalog "1"). The same key reached the
// representation through a variable of type Float (or an enum) placed in the literal: graphql-js does not check a
// variable's position inside a custom scalar's literal, and `_Any` reads its value untyped. An ID argument refuses
// the same variable before anything runs (GRAPHQL_VALIDATION_FAILED).
const fixture = useFacade({ PIM_CACHE: 'false' });

const withVariable = (definition: string) =>
  `query(${definition}) { _entities(representations: [{ __typename: "Catalog", catalogId: $k }, { __typename: "Catalog", catalogId: "OK" }]) { ... on Catalog { products } } }`;

describe('a representation whose key is a variable of a type an ID refuses', () => {
  it.each([
    ['$k: Float = 1.0000000000000001', {}],
    ['$k: Float!', { k: 7 }],
    ['$k: __TypeKind = OBJECT', {}],
  ])(
    'is refused at its index for %s, as an ID argument is, and sends nothing for it',
    async (definition, variables) => {
      const { body: argument } = await fixture.facade.post(
        `query(${definition}) { catalogProducts(catalogId: $k) }`,
        variables,
      );
      expect(argument.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      fixture.upstream.reset();
      const { body } = await fixture.facade.post(withVariable(definition), variables);
      expect(fixture.upstream.requests.map((request) => request.url)).toEqual([
        '/pxm/pimapi/v1/catalogs/OK/products/search',
      ]);
      expect(body.data._entities[0]).toBeNull();
      expect(body.errors).toMatchObject([{ path: ['_entities', 0], extensions: { code: 'BAD_USER_INPUT' } }]);
    },
  );

  it.each([
    ['$k: ID!', { k: 'C7' }],
    ['$k: String!', { k: 'C7' }],
    ['$k: Int!', { k: 7 }],
  ])('is read for %s, as an ID argument reads it', async (definition, variables) => {
    fixture.upstream.reset();
    const { body } = await fixture.facade.post(withVariable(definition), variables);
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests.map((request) => request.url).sort()).toEqual(
      [
        `/pxm/pimapi/v1/catalogs/${String(variables.k)}/products/search`,
        '/pxm/pimapi/v1/catalogs/OK/products/search',
      ].sort(),
    );
  });
});
