import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// An 8 KB document of 700 `__typename` passes every shape limit (under GRAPHQL_MAX_TOKENS, under graphql-js's own
// overlap-comparison budget) and calls nothing upstream, yet its validation held the event loop for 100+ ms: the
// @defer/@stream plugin's copy of OverlappingFieldsCanBeMergedRule (yoga.ts ran it beside graphql-js's) compared every
// pair of same-named fields with no budget, printing their arguments each time. Any caller, no key needed, could take
// the process's CPU from every other credential with a few requests.
const fixture = useFacade({ NODE_ENV: 'production' });

let n = 0;
const post = (query: string) =>
  fetch(fixture.facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'made-up-key-1' },
    body: JSON.stringify({ query }),
  }).then((r) => r.json());
const conflict =
  'Fields "a" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.';
const streams =
  '{ a: _entities(representations: []) @stream { __typename } a: _entities(representations: []) @stream(initialCount: 1) { __typename }';

// Not a timing: how the work grows. 700 fields of one response name against 700 of as many names (aliases), the same
// size, validated in turn (distinct texts, a comment being no token, so each is parsed and validated afresh). Compared
// pairwise without a budget, the first cost 23-38 times the second; within graphql-js's budget 1-4 times here, once 10
// in a full CI run. The work is the main thread's own (`threadCpuUsage`): GC helpers and JIT compiler threads, busier
// when other test files share the cores, are not the validation's.
async function sameNamesOverAliases(prefix = '{'): Promise<number> {
  const same = () => `${prefix} ${'__typename '.repeat(700)}} #${n++}`;
  const aliased = () => `${prefix} ${Array.from({ length: 700 }, (_, i) => `a${i}: __typename`).join(' ')} } #${n++}`;
  const cpu = async (document: () => string) => {
    const before = process.threadCpuUsage();
    for (let i = 0; i < 5; i++) await post(document());
    const { user, system } = process.threadCpuUsage(before);
    return user + system;
  };
  (await cpu(same), await cpu(aliased));
  let ratio = Infinity;
  // The least of five rounds: another process's burst on a shared machine only ever raises one.
  for (let round = 0; round < 5; round++) ratio = Math.min(ratio, (await cpu(same)) / (await cpu(aliased)));
  return ratio;
}

it('validates many fields of one name in work of the order of as many distinct ones', { timeout: 60_000 }, async () => {
  expect(await post(`{ ${'__typename '.repeat(700)}}`)).toEqual({ data: { __typename: 'Query' } });
  const ratio = await sameNamesOverAliases();
  expect(ratio, `same names cost ${ratio.toFixed(1)} times as much`).toBeLessThan(12);
});

it('does so for a document that streams, whose @stream conflicts are still refused', { timeout: 60_000 }, async () => {
  expect((await post(`${streams} ${'__typename '.repeat(680)}}`)).errors.map((e: any) => e.message)).toEqual([
    conflict,
  ]);
  const ratio = await sameNamesOverAliases(streams);
  expect(ratio, `same names cost ${ratio.toFixed(1)} times as much`).toBeLessThan(12);
});

it('still refuses a @stream conflict, directly and through a fragment, and takes two alike', async () => {
  const messages = (body: any) => body.errors?.map((e: { message: string }) => e.message);
  expect(messages(await post(`${streams} }`))).toEqual([conflict]);
  const viaFragment = await post(
    '{ ...F a: _entities(representations: []) @stream(initialCount: 2) { __typename } } fragment F on Query { a: _entities(representations: []) @stream(initialCount: 1) { __typename } }',
  );
  expect(messages(viaFragment)?.join('\n')).toMatch(/differing stream directives/);
  const same = await post(
    '{ a: _entities(representations: []) @stream { __typename } a: _entities(representations: []) @stream { __typename } }',
  );
  expect(same.errors).toBeUndefined();
});
