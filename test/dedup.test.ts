import { describe, expect, it } from 'vitest';
import { echo } from './helpers/upstream.ts';
import { startFacade, useFacade } from './helpers/facade.ts';

const fixture = useFacade({
  GRAPHQL_BATCHING: 'true',
  PIM_MAX_CONCURRENCY: '2',
  PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '2',
});

const aliases = (n: number, args: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => `a${i}: catalogProducts(${args(i)})`).join('\n');

describe('deduplication inside one GraphQL request', () => {
  it('sends 10 identical aliases once', async () => {
    const { body } = await fixture.facade.post(`{ ${aliases(10, () => 'catalogId: "c1", page: 0')} }`);
    expect(Object.keys(body.data ?? {})).toHaveLength(10);
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('sends a field repeated through fragments and variables once', async () => {
    const { body } = await fixture.facade.post(
      `query($id: ID!) {
        byVariable: classificationGroup(classificationId: "E", classificationGroupId: $id, levels: 0)
        ...F
        again: classificationGroup(classificationId: "E", classificationGroupId: "27", levels: 0)
      }
      fragment F on Query { ... on Query { classificationGroup(classificationId: "E", classificationGroupId: "27", levels: 0) } }`,
      { id: '27' },
    );
    expect(body.errors).toBeUndefined();
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('sends distinct calls once each, in parallel under the concurrency cap', async () => {
    let inFlight = 0;
    let peak = 0;
    fixture.upstream.respond((req, res) => {
      peak = Math.max(peak, ++inFlight);
      setTimeout(() => {
        inFlight--;
        echo(req, res);
      }, 30);
    });
    const { body } = await fixture.facade.post(`{ ${aliases(6, (i) => `catalogId: "c${i % 3}", page: ${i % 2}`)} }`);
    expect(body.errors).toBeUndefined();
    expect(new Set(fixture.upstream.requests.map((r) => r.url)).size).toBe(6);
    expect(fixture.upstream.requests).toHaveLength(6);
    expect(peak).toBe(2);
  });

  it('shares calls across the operations of a batched HTTP request', async () => {
    const operation = { query: '{ classificationGroups(classificationId: "E", page: 0) }' };
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        operation,
        operation,
        { query: '{ x: classificationGroups(classificationId: "E", page: 0) }' },
      ]),
    });
    const results = (await response.json()) as Array<{ data: unknown }>;
    expect(results).toHaveLength(3);
    expect(fixture.upstream.requests).toHaveLength(1);
  });

  it('does not share calls between separate GraphQL requests', async () => {
    await fixture.facade.post('{ catalogProducts(catalogId: "c1") }');
    await fixture.facade.post('{ catalogProducts(catalogId: "c1") }');
    expect(fixture.upstream.requests).toHaveLength(2);
  });
});
