import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { partsOf } from '../helpers/multipart.ts';

// README "Errors": every error reaches the client with its stable extensions.code; errors.ts gives the executor's
// refusals of input BAD_USER_INPUT and masks anything else as "Unexpected error." (logged). Yoga applies that mask to the
// `errors` of each part of a @defer/@stream answer, never to those of its `incremental` payloads: the same refusal
// went out with a code at the top of an answer and without any (its raw words, counted UNKNOWN) in a deferred part,
// e.g. under `_entities`, where a gateway's client follows references.
const logs = captureLogs('info');
const fixture = useFacade({}, undefined, { logger: logs.logger });
const entity = '_entities(representations: [{__typename: "Catalog", catalogId: "a"}])';

const errorsOf = async (query: string, variables: Record<string, unknown>) => {
  const response = await fetch(fixture.facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query, variables }),
  });
  return partsOf(await response.text()).flatMap((part) => [
    ...(part.errors ?? []),
    ...(part.incremental ?? []).flatMap((payload) => payload.errors ?? []),
  ]);
};

describe('an error in a later part of a streamed answer', () => {
  it.each([
    [
      'an entity field under a deferred @defer(if: null)',
      `query($b: Boolean) { ... @defer { ${entity} { ... @defer(if: $b) { ... on Catalog { products } } } } }`,
      { b: null },
    ],
    [
      'a deferred _entities @stream(initialCount: null)',
      `query($n: Int) { ... @defer { x: ${entity} @stream(initialCount: $n) { __typename } } }`,
      { n: null },
    ],
  ])('carries the code it has in the first part: %s', async (_name, query, variables) => {
    const errors = await errorsOf(query, variables);
    expect(errors).toHaveLength(1);
    expect(errors.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  it('counts in graphql_errors_total under its code, not UNKNOWN', async () => {
    await errorsOf(`query($n: Int) { ... @defer { x: ${entity} @stream(initialCount: $n) { __typename } } }`, {
      n: null,
    });
    const metrics = (await fixture.facade.get('/metrics')).text;
    expect(metrics).not.toMatch(/graphql_errors_total\{code="UNKNOWN"\}/);
    expect(metrics).toMatch(/graphql_errors_total\{code="BAD_USER_INPUT"\} [1-9]/);
    expect(logs.lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});
