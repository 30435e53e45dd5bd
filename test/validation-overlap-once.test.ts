import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from './helpers/facade.ts';
import { startUpstream, type Upstream } from './helpers/upstream.ts';

// graphql-js's OverlappingFieldsCanBeMergedRule and @graphql-yoga/plugin-defer-stream's copy of it both run (the
// plugin's filter meant to take graphql-js's out never took effect): one conflict was reported twice wherever
// suggestions are shown (development, or GRAPHQL_INTROSPECTION=true).
describe('a conflict between two fields of one response name', () => {
  let upstream: Upstream;
  let facade: Facade;
  beforeAll(async () => {
    upstream = await startUpstream();
    facade = await startFacade(upstream.url, { NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' });
  });
  afterAll(async () => {
    await facade?.close();
    await upstream?.close();
  });

  const conflicting = '{ a: catalogProducts(catalogId: "c") a: catalogProducts(catalogId: "d") }';

  it('is reported once, on the first request and on a cached validation alike', async () => {
    for (let round = 0; round < 2; round++) {
      const answer = await facade.post(conflicting);
      const messages = (answer.body.errors as Array<{ message: string }>).map((error) => error.message);
      expect(messages).toEqual([
        'Fields "a" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional.',
      ]);
    }
  });

  it('still refuses a conflict only the @stream rule sees', async () => {
    const answer = await facade.post(
      '{ a: _entities(representations: []) @stream(initialCount: 1) { __typename } a: _entities(representations: []) @stream(initialCount: 2) { __typename } }',
    );
    expect(answer.body.errors.map((error: { message: string }) => error.message)).toContain(
      'Fields "a" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.',
    );
  });
});
