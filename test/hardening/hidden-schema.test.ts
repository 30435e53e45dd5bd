import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// docs/operations.md: with NODE_ENV=production "Did you mean" suggestions are removed, so no error names a field.
// GraphQL Armor masks only `Did you mean "…"?`; graphql-js' suggestion for a field asked of an abstract type reads
// `Did you mean to use an inline fragment on "A", "B", or "C"?` and goes out whole, naming the entity types.
const fixture = useFacade({ NODE_ENV: 'production' });

describe('with NODE_ENV=production', () => {
  it('names no entity type in a suggestion for a field asked of _Entity', async () => {
    const { status, body } = await fixture.facade.post('{ _entities(representations: []) { group } }', undefined, {
      accept: 'application/graphql-response+json',
    });
    expect(status).toBe(400);
    const messages = body.errors.map((error: { message: string }) => error.message).join('\n');
    expect(messages).toMatch(/Cannot query field "group" on type "_Entity"/);
    expect(messages).not.toMatch(/Did you mean/);
    expect(messages).not.toMatch(/"Classification/);
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
