import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// docs/operations.md: "a document nested deeper than the stack allows ... is refused rather than crashing"; limits.ts
// guards parse and validation for when GRAPHQL_MAX_TOKENS is raised (hostile.test.ts runs such a server). Inline
// fragments add no depth (Armor flattens them), so a few thousand nested `... {` pass every limit; with a @defer
// inside, what runs after validation (the 406 check's recursive walk in limits.ts `streams`, and the executor)
// recurses once per level and runs out of stack: a 500 "Unexpected error." logged with its stack, at error level.
const logs = captureLogs('info');
const fixture = useFacade(
  { GRAPHQL_MAX_TOKENS: '1000000', GRAPHQL_MAX_ALIASES: '5000', GRAPHQL_MAX_COST: '10000000' },
  undefined,
  { logger: logs.logger },
);

const nested = (levels: number) => `{ ${'... { '.repeat(levels)} ... @defer { __typename } ${'}'.repeat(levels)} }`;

describe('inline fragments nested thousands deep around a @defer, past a raised token limit', () => {
  it.each([
    ['takes no stream (the 406 check walks the document)', 'application/json'],
    ['takes a stream (the executor walks it)', 'multipart/mixed'],
  ])('are never a 500 for a client that %s', async (_name, accept) => {
    const outcomes: string[] = [];
    // Stack use differs between runs (JIT): every depth from 500 to 6,000 is tried, each answered or refused.
    for (let levels = 500; levels <= 6_000; levels += 250) {
      const before = logs.lines.length;
      const answer = await fixture.facade.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: nested(levels) }),
      });
      const logged = logs.lines.slice(before).filter((line) => line.level >= 50).length;
      if (answer.status >= 500 || logged > 0) outcomes.push(`${levels}: HTTP ${answer.status}, ${logged} error lines`);
    }
    expect(outcomes).toEqual([]);
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  it('a chain of a thousand fragments spread in each other is refused before it runs, at once', async () => {
    const links = 1_000;
    const chain = Array.from({ length: links }, (_, i) =>
      i === links - 1
        ? `fragment F${i} on Query { ... @defer { __typename } }`
        : `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    );
    const started = Date.now();
    const answer = await fixture.facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query: `{ ...F0 } ${chain.join(' ')}` }),
    });
    expect(answer.status).toBe(400);
    // The refusal comes as the one part of a multipart answer.
    const refused = JSON.parse(/\{"errors".*\}/.exec(answer.text)?.[0] ?? 'null');
    expect(
      refused?.errors.map((error: { message: string; extensions: { code: string } }) => error.extensions.code),
    ).toContain('GRAPHQL_VALIDATION_FAILED');
    expect(answer.text).toContain('The document is nested too deeply');
    // Each fragment spread twice: walked without remembering each one's depth, 2^1000 paths.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fixture.upstream.requests).toHaveLength(0);
  });
});
