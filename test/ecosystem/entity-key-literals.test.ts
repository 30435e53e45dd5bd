import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// `_Any` parses a representation written as a literal untyped: a Float literal became a number and an enum a string,
// and the key check took them for ids (`catalogId: 1.0000000000000001` read catalog "1") where an ID argument refuses
// the same literal before anything runs.
const fixture = useFacade({ PIM_CACHE: 'false' });
const catalogs = (...keys: string[]) =>
  `{ _entities(representations: [${keys.map((key) => `{ __typename: "Catalog", catalogId: ${key} }`).join(', ')}]) { ... on Catalog { catalogId products } } }`;

describe('a representation whose key is written as a literal', () => {
  it.each(['1.0000000000000001', '2e0', '7.0', 'MACHINERY'])(
    'is refused at its index for %s, as an ID argument is, and sends nothing for it',
    async (literal) => {
      const { body: argument } = await fixture.facade.post(`{ catalogProducts(catalogId: ${literal}) }`);
      expect(argument.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      fixture.upstream.reset();
      const { body } = await fixture.facade.post(catalogs(literal, '"OK"'));
      expect(body.data._entities[0]).toBeNull();
      expect(body.errors).toMatchObject([{ path: ['_entities', 0], extensions: { code: 'BAD_USER_INPUT' } }]);
      expect(body.data._entities[1].products.status).toBe(200);
      expect(fixture.upstream.requests.map((request) => request.url)).toEqual([
        '/pxm/pimapi/v1/catalogs/OK/products/search',
      ]);
    },
  );

  it('takes an Int literal as its digits and a String literal as it is', async () => {
    const { body } = await fixture.facade.post(
      `{ _entities(representations: [{ __typename: "Catalog", catalogId: 42 }, { __typename: "Catalog", catalogId: "A" }]) { ... on Catalog { catalogId } } }`,
    );
    expect(body).toEqual({ data: { _entities: [{ catalogId: '42' }, { catalogId: 'A' }] } });
  });
});
