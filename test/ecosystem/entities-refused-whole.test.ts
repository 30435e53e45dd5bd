import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// docs/integration.md: "an operation past [FEDERATION_MAX_REPRESENTATIONS] is refused whole with BAD_USER_INPUT
// before any of its fields calls the PIM". A root field named before `_entities` runs first and sends its call;
// the refusal then nulls the whole answer (`_entities` is non-null), so the call went out for nothing.
it('refuses an operation over FEDERATION_MAX_REPRESENTATIONS before any of its fields calls the PIM', async () => {
  const { upstream, facade } = await servers.start(echo, { PIM_CACHE: 'false', FEDERATION_MAX_REPRESENTATIONS: '2' });
  const representations = ['A', 'B', 'C'].map((catalogId) => ({ __typename: 'Catalog', catalogId }));
  const { body } = await facade.post(
    `query($r: [_Any!]!) {
      root: catalogProducts(catalogId: "ROOT")
      group: classificationGroup(classificationId: "C", classificationGroupId: "G")
      _entities(representations: $r) { ... on Catalog { products } }
    }`,
    { r: representations },
  );
  expect(body).toMatchObject({
    data: null,
    errors: [{ message: expect.stringMatching(/limit of 2 per request/), extensions: { code: 'BAD_USER_INPUT' } }],
  });
  expect(upstream.requests.map((r) => r.url)).toEqual([]);
});
