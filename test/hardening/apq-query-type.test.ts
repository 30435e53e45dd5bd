import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// A request naming an APQ hash beside a `query` that is not a string: Yoga refuses a non-string query with
// 400 BAD_REQUEST, as it does without the hash; a null one is no query, so the hash is looked up. Hashing it
// (createHash().update(123) throws a TypeError) made each a 500 with a stack in the log.
const logs = captureLogs('info');
const fixture = useFacade({}, undefined, { logger: logs.logger });

const hash = 'a'.repeat(64);
describe('an APQ request whose query is not a string', () => {
  it.each([
    ['a number', 123, 400, 'BAD_REQUEST'],
    ['an object', { a: 1 }, 400, 'BAD_REQUEST'],
    ['an array', ['{ __typename }'], 400, 'BAD_REQUEST'],
    ['null (a lookup)', null, 404, 'PERSISTED_QUERY_NOT_FOUND'],
  ])('query as %s is a %i %s, not a 500, and logs no error', async (_name, query, status, code) => {
    const before = logs.lines.length;
    const answer = await fixture.facade.postBody({
      query,
      extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
    });
    expect({ status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code }).toEqual({ status, code });
    expect(logs.lines.slice(before).filter((line) => line.level >= 50)).toEqual([]);
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
