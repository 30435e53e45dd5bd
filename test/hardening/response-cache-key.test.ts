import { describe, expect, it } from 'vitest';
import { cacheableEcho } from '../helpers/upstream.ts';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// The cache of results (on by default) builds its key with Array.prototype.join over the request's params.
// It guards variables nested past JSON.stringify's stack, but not the other params: an `operationName` that is an
// array nested 5,000 deep (or such a `query`) makes join recurse through toString until the stack runs out (RangeError), a 500
// "Unexpected error." logged twice at error level with its stack. Without the cache the same request is
// Yoga's 400 OPERATION_RESOLUTION_FAILURE, as it is now with the cache on.
const logs = captureLogs('info');
const fixture = useFacade({}, cacheableEcho(60), { logger: logs.logger });

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('a query or operationName that is an array nested 5,000 deep', () => {
  it.each([
    ['operationName', `{"query":"{ catalogProducts(catalogId: \\"a\\") }","operationName":${deep(5_000)}}`],
    ['query', `{"query":${deep(5_000)}}`],
  ])('as %s is a 4xx with a code, not a 500, and logs no error', async (_name, body) => {
    const before = logs.lines.length;
    const answer = await fixture.facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(answer.body.errors[0].extensions.code).not.toBe('INTERNAL_SERVER_ERROR');
    expect(logs.lines.slice(before).filter((line) => line.level >= 50)).toEqual([]);
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
