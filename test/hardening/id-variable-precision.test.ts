import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

// A JSON number past 2^53 has no exact value once parsed: coerced to an ID, its String() is another id (or `1e+21`),
// and the façade would read another catalog than the one asked for and answer it as that one. Entity
// representations refuse such a key (representations.ts); an ID variable must be refused the same way, unsent.
describe('ID variables given as JSON numbers', () => {
  it.each([
    ['an integer past 2^53', '12345678901234567890'],
    ['an integer written with an exponent', '1e21'],
  ])('refuses %s with BAD_USER_INPUT and sends nothing', async (_label, number) => {
    const { status, body } = await fixture.facade.postBody({
      query: 'query($c: ID!) { catalogProducts(catalogId: $c) }',
      variables: JSON.parse(`{"c": ${number}}`),
    });
    // What the client sent, byte for byte: `{"c": 12345678901234567890}` (a Python or Java client writes it so).
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual([]);
    expect(status).toBe(200);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.data?.catalogProducts ?? null).toBeNull();
  });

  it("refuses one given to an entity field's argument", async () => {
    const { body } = await fixture.facade.post(
      'query($g: ID!) { _entities(representations: [{__typename: "Catalog", catalogId: "A"}]) { ... on Catalog { products(classificationGroupId: $g) } } }',
      { g: 2 ** 60 },
    );
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual([]);
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('refuses it as graphql-js refuses a variable it cannot coerce: 400 under application/graphql-response+json', async () => {
    const { status, body } = await fixture.facade.post(
      'query($c: ID!) { catalogProducts(catalogId: $c) }',
      { c: 2 ** 60 },
      { accept: 'application/graphql-response+json' },
    );
    expect(fixture.upstream.requests).toEqual([]);
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT' });
  });

  it('still takes a safe integer as its digits', async () => {
    const { body } = await fixture.facade.post('query($c: ID!) { catalogProducts(catalogId: $c) }', {
      c: 9007199254740991,
    });
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests.map((r) => r.url)).toEqual([
      '/pxm/pimapi/v1/catalogs/9007199254740991/products/search',
    ]);
  });
});
