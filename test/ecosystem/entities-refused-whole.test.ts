import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { partsOf } from '../helpers/multipart.ts';
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
    errors: expect.arrayContaining([
      expect.objectContaining({
        message: expect.stringMatching(/limit of 2 per request/),
        extensions: { code: 'BAD_USER_INPUT' },
      }),
    ]),
  });
  expect(upstream.requests.map((r) => r.url)).toEqual([]);
});

// A deferred `_entities` past the limit refuses in a later part: the initial part must not hold the refused root
// field as a bare null.
it('a root field refused because of a deferred _entities over the limit is not a silent null', async () => {
  const { facade } = await servers.start(echo, { PIM_CACHE: 'false', FEDERATION_MAX_REPRESENTATIONS: '2' });
  const representations = ['A', 'B', 'C'].map((catalogId) => ({ __typename: 'Catalog', catalogId }));
  const response = await fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({
      query: `query($r: [_Any!]!) {
        root: catalogProducts(catalogId: "ROOT")
        ... @defer { _entities(representations: $r) { ... on Catalog { products } } }
      }`,
      variables: { r: representations },
    }),
  });
  const parts = partsOf(await response.text());
  const initial = parts.find((part) => part.data !== undefined)!;
  // Refused (the limit counts the deferred `_entities` too), it says why in the part that holds it.
  expect(initial.data?.root).toBeNull();
  expect(initial.errors ?? []).toContainEqual(
    expect.objectContaining({ path: ['root'], extensions: { code: 'BAD_USER_INPUT' } }),
  );
});
