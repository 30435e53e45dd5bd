import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// `$__proto__` is a legal GraphQL name, and JSON.parse gives its value an own key; but graphql-js coerces variables
// into a plain `{}`, where assigning `__proto__` sets the prototype: the value sent was silently dropped. A nullable
// filter reached the PIM as absent (the whole catalog answered as if filtered), `@defer(if: $__proto__)` sent false
// ran in full and ended in a 406, and a non-null use failed with an error that had no code. The name is refused.
const fixture = useFacade();

const post = (query: string, variables: unknown) =>
  fixture.facade.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables: JSON.parse(JSON.stringify(variables).replace('"proto"', '"__proto__"')) }),
  });

const refusedBeforeThePim = async (answer: Awaited<ReturnType<typeof post>>) => {
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body.errors.map((e: { extensions?: { code?: string } }) => e.extensions?.code)).toEqual([
    'GRAPHQL_VALIDATION_FAILED',
  ]);
  expect(answer.body.errors[0].message).toContain('$__proto__');
  expect(fixture.upstream.requests).toEqual([]);
};

describe('a variable named $__proto__', () => {
  it('as a nullable filter is refused, never sent without the value given', async () => {
    const query = 'query($__proto__: ID) { catalogProducts(catalogId: "A", classificationId: $__proto__) }';
    await refusedBeforeThePim(await post(query, { proto: 'CLS' }));
  });

  it('as a required id is refused with a stable code', async () => {
    await refusedBeforeThePim(
      await post('query($__proto__: ID!) { catalogProducts(catalogId: $__proto__) }', { proto: 'A' }),
    );
  });

  it('as @defer(if:) sent false is refused, neither streamed nor run into a 406', async () => {
    const query = 'query($__proto__: Boolean!) { ... @defer(if: $__proto__) { catalogProducts(catalogId: "A") } }';
    await refusedBeforeThePim(await post(query, { proto: false }));
  });
});
