import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const { start } = closedAfterEach();

// A whole result's span ends with its response, also when its client left first (it then never gets one), and its
// status is what its client got (tracing.ts), and graphql_errors_total counts nothing for a client that left
// (it is one disconnect). The field its leaving cut (an AbortError, no code) made the span an ERROR named UNKNOWN: a
// trace backend showed an unexpected failure for every client that closed its tab or timed out.
it.each(['application/json', 'multipart/mixed'])(
  'ends the span of an operation whose %s client left before its answer, with no error status',
  async (accept) => {
    const spans = new InMemorySpanExporter();
    const answerLate = (_req: unknown, res: ServerResponse) =>
      void setTimeout(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200,"meta":{},"data":[]}'),
        300,
      );
    const { upstream, facade } = await start(answerLate, { PIM_CACHE: 'false' }, { extras: { spanExporter: spans } });
    const leaving = new AbortController();
    const sent = fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: 'query Left { catalogProducts(catalogId: "A") }' }),
      signal: leaving.signal,
    }).catch(() => undefined);
    await expect.poll(() => upstream.requests.length).toBe(1);
    leaving.abort();
    await sent;
    await expect.poll(() => spans.getFinishedSpans().filter((span) => span.name === 'query Left')).toHaveLength(1);
    const span = spans.getFinishedSpans().find((one) => one.name === 'query Left')!;
    const metrics = (await facade.get('/metrics')).text;
    expect(metrics, 'the client left: a disconnect, no error').toMatch(/^graphql_client_disconnects_total 1$/m);
    expect(metrics).not.toMatch(/^graphql_errors_total\{/m);
    expect(span.status.code, `span status ${JSON.stringify(span.status)}`).not.toBe(SpanStatusCode.ERROR);
    expect(span.attributes['graphql.error.count']).toBeUndefined();
  },
);
