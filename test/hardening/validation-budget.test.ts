import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// graphql-js gives up comparing fields for overlaps past a work budget and answers "Validation
// aborted.": a limit like the others, so it must be refused like them, with a 400 and a code.
describe('an operation too big for graphql-js to validate', () => {
  const fixture = useFacade();

  it('is an HTTP 400 with GRAPHQL_VALIDATION_FAILED, whatever the Accept header', async () => {
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const { status, body } = await fixture.facade.post(`{ ${'__typename '.repeat(800)}}`, undefined, { accept });
      expect(status).toBe(400);
      expect(body.errors).toEqual([
        {
          message: 'The operation has too many fields to validate; split it up',
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        },
      ]);
      expect(body.data).toBeUndefined();
    }
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  it('leaves a smaller operation of the same kind alone', async () => {
    const { status, body } = await fixture.facade.post(`{ ${'__typename '.repeat(100)}}`);
    expect(status).toBe(200);
    expect(body).toEqual({ data: { __typename: 'Query' } });
  });
});
