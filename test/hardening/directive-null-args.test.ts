import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// errors.ts turns the executor's refusal of a negative `@stream(initialCount:)` into BAD_USER_INPUT
// (test/hardening/hostile.test.ts). A null one (`initialCount: null`, or a variable sent as null) is refused by the
// same executor in other words ("initialCount must be a number"): masked as "Unexpected error." with
// INTERNAL_SERVER_ERROR, and logged at error level with its stack, once per request a client sends.
const logs = captureLogs('info');
const fixture = useFacade({}, undefined, { logger: logs.logger });

const entities = '_entities(representations: [{__typename: "Catalog", catalogId: "a"}])';
const streamAccept = { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' };

describe('@stream with a null initialCount', () => {
  it.each([
    ['as a literal', `{ ${entities} @stream(initialCount: null) { __typename } }`, undefined],
    ['as a variable', `query ($n: Int) { ${entities} @stream(initialCount: $n) { __typename } }`, { n: null }],
  ])('%s is BAD_USER_INPUT, not an unexpected error, and logs no error', async (_name, query, variables) => {
    const before = logs.lines.length;
    const answer = await fixture.facade.request('/graphql', {
      method: 'POST',
      headers: streamAccept,
      body: JSON.stringify({ query, variables }),
    });
    const codes = (answer.body?.errors ?? []).map((error: any) => error.extensions?.code);
    expect(codes).toEqual(['BAD_USER_INPUT']);
    expect(logs.lines.slice(before).filter((line) => line.level >= 50)).toEqual([]);
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});

// A nullable variable may stand where an argument with a default is non-null (`@defer(if: Boolean! = true)`); sent as
// null, graphql-js refuses it while executing with "Argument "if" of non-null type "Boolean!" must not be null." and
// no extensions.code at all (counted as UNKNOWN in graphql_errors_total), where every refusal of input has one.
describe('@defer or @stream with `if:` a variable sent as null', () => {
  it.each([
    ['@defer', 'query ($b: Boolean) { ... @defer(if: $b) { catalogProducts(catalogId: "a") } }'],
    ['@stream', `query ($b: Boolean) { ${entities} @stream(if: $b) { __typename } }`],
  ])('%s: the refusal carries BAD_USER_INPUT and nothing is sent', async (_name, query) => {
    for (const accept of ['multipart/mixed, application/json', 'application/json']) {
      const answer = await fixture.facade.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query, variables: { b: null } }),
      });
      // A multipart answer's first part holds the error.
      const json = answer.body ?? JSON.parse(/\{"errors".*\}/.exec(answer.text)?.[0] ?? 'null');
      const codes = (json?.errors ?? []).map((error: any) => error.extensions?.code);
      expect({ accept, codes }).toEqual({ accept, codes: ['BAD_USER_INPUT'] });
    }
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
