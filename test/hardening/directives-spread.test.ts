import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// GRAPHQL_MAX_DIRECTIVES (50 by default) is documented as "directives per operation" (docs/configuration.md,
// docs/operations.md): an operation with more is refused with 400 GRAPHQL_VALIDATION_FAILED whatever the Accept.
const fixture = useFacade();
const SPREADS = 60;

const refusedForDirectives = (answer: { status: number; body: any }) => {
  expect(answer.status).toBe(400);
  expect(answer.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(answer.body.errors?.[0]?.message).toMatch(/Directives limit of 50 exceeded/);
};

describe('GRAPHQL_MAX_DIRECTIVES counts every directive of the operation', () => {
  it('refuses 60 directives on 60 inline fragments (control)', async () => {
    const query = `{ ${Array.from({ length: SPREADS }, () => '... @include(if: true) { __typename }').join(' ')} }`;
    refusedForDirectives(await fixture.facade.post(query));
  });

  it('refuses 60 directives on 60 spreads of one named fragment', async () => {
    const spreads = Array.from({ length: SPREADS }, () => '...F @include(if: true)').join(' ');
    refusedForDirectives(await fixture.facade.post(`{ ${spreads} } fragment F on Query { __typename }`));
  });

  it('refuses 60 @defer on 60 spreads of one named fragment (60 deferred parts)', async () => {
    const spreads = Array.from({ length: SPREADS }, () => '...F @defer').join(' ');
    const answer = await fixture.facade.post(`{ ${spreads} } fragment F on Query { __typename }`, undefined, {
      accept: 'multipart/mixed, application/json',
    });
    refusedForDirectives(answer);
  });
});
