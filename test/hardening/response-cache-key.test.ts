import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cacheableEcho, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// The cache of results (on by default) builds its key with Array.prototype.join over the request's params.
// It guards variables nested past JSON.stringify's stack, but not the other params: an `operationName` that is an
// array nested 5,000 deep (or such a `query`) makes join recurse through toString until the stack runs out (RangeError), a 500
// "Unexpected error." logged twice at error level with its stack. Without the cache the same request is
// Yoga's 400 OPERATION_RESOLUTION_FAILURE, as it is now with the cache on.
let upstream: Upstream;
let facade: Facade;
const logs = captureLogs('info');
beforeAll(async () => {
  upstream = await startUpstream(cacheableEcho(60));
  facade = await startFacade(upstream.url, {}, { logger: logs.logger });
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  await facade.close();
  await upstream.close();
});

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('a query or operationName that is an array nested 5,000 deep', () => {
  it.each([
    ['operationName', `{"query":"{ catalogProducts(catalogId: \\"a\\") }","operationName":${deep(5_000)}}`],
    ['query', `{"query":${deep(5_000)}}`],
  ])('as %s is a 4xx with a code, not a 500, and logs no error', async (_name, body) => {
    const before = logs.lines.length;
    const answer = await facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(answer.body.errors[0].extensions.code).not.toBe('INTERNAL_SERVER_ERROR');
    expect(logs.lines.slice(before).filter((line) => line.level >= 50)).toEqual([]);
    expect(upstream.requests).toHaveLength(0);
  });
});
