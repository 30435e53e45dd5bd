import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../helpers/demo.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// docs/operations.md, Traces: the operation span is named with "the operation name as the metrics label it, so
// invented or long names are `other`".
let demo: Awaited<ReturnType<typeof startDemo>>;
let server: Facade;
const spans = new InMemorySpanExporter();
beforeAll(async () => {
  demo = await startDemo();
  server = await startFacade(demo.url, {}, { extras: { spanExporter: spans } });
});
afterAll(async () => {
  await server?.close();
  await demo?.close();
});

describe('operation span names and metric labels', () => {
  it('name an operation alike once the 100 label values are taken (an anonymous operation took one)', async () => {
    // One anonymous operation: the metrics keep `anonymous` as one of their 100 names.
    expect((await server.post('{ __typename }')).status).toBe(200);
    for (let i = 1; i <= 100; i++) {
      expect((await server.post(`query N${i} { __typename }`)).status).toBe(200);
    }
    const scrape = (await server.get('/metrics')).text;
    const labelled = scrape.includes('graphql_operations_total{operation_type="query",operation_name="N100"}');
    const spanNamed = spans.getFinishedSpans().some((s) => s.name === 'query N100');
    // Either both name it, or both call it `other`.
    expect(spanNamed, 'the span named N100 as its metrics label is').toBe(labelled);
  });
});
