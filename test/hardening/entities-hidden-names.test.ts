import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { partsOf } from '../helpers/multipart.ts';

// docs/operations.md: with NODE_ENV=production introspection is refused and suggestions are removed, "so no error names
// a field"; test/hardening/hidden-schema.test.ts holds that no error names the entity types either. `_entities` stays
// served there (a gateway follows references through it), and its refusal of a representation listed every entity
// type of the subgraph ("... one of Catalog, Classification, ClassificationGroup") and the key field a type needs:
// anyone could read the schema's entities and their keys off one request.
const fixture = useFacade({ NODE_ENV: 'production' });

const representations = [
  {},
  { __typename: 'Product', sku: 'A-1' },
  { __typename: 'ClassificationGroup', classificationId: 'ECLASS' },
  { __typename: 'Catalog', catalogId: 'MACHINERY' },
];
const named = /Catalog\b|Classification,|ClassificationGroup|catalogId|classificationGroupId/;

describe('with NODE_ENV=production', () => {
  it('refuses a bad representation at its index without naming the schema', async () => {
    const { body } = await fixture.facade.post(
      'query($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
      { r: representations },
    );
    expect(body.data._entities).toEqual([null, null, null, { __typename: 'Catalog' }]);
    expect(body.errors.map((e: any) => [e.path, e.extensions.code])).toEqual(
      [0, 1, 2].map((i) => [['_entities', i], 'BAD_USER_INPUT']),
    );
    for (const error of body.errors) expect(error.message).not.toMatch(named);
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  it('names nothing in a streamed part either', async () => {
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({
        query: 'query($r: [_Any!]!) { _entities(representations: $r) @stream { __typename } }',
        variables: { r: representations },
      }),
    });
    const errors = partsOf(await response.text()).flatMap((part) => [
      ...(part.errors ?? []),
      ...(part.incremental ?? []).flatMap((i) => i.errors ?? []),
    ]);
    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error.message).not.toMatch(named);
  });
});
