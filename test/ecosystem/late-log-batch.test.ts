import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

// A batch (GRAPHQL_BATCHING) sent to a client taking only streams is serialized after its status, one operation's
// result after another. The request log's line waited for the first result's serialization only, and tallied the
// others' errors as executed: an operation sent UPSTREAM_TOO_LARGE in place of its result (sent-bytes.ts) was logged
// with no error at all, while the metrics counted it.
const { logger, lines } = captureLogs('info');
const fixture = useFacade({ GRAPHQL_BATCHING: 'true', PIM_MAX_REQUEST_BYTES: '4000' }, cacheableEcho(60), { logger });
const big = `{ ${Array.from({ length: 10 }, (_, i) => `a${i}${'_'.repeat(400)}: catalogProducts(catalogId: "C")`).join(' ')} }`;

it.each(['multipart/mixed', 'text/event-stream'])(
  'logs the refusal a batch client taking %s was sent',
  async (accept) => {
    const id = `batch-${accept.replace('/', '-')}`;
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, 'x-request-id': id, 'x-api-key': 'made-up-key-1' },
      body: JSON.stringify([{ query: '{ a: catalogProducts(catalogId: "A") }' }, { query: big }]),
    });
    const text = await response.text();
    await new Promise((r) => setTimeout(r, 300));
    const mine = lines.filter((one) => one.reqId === id);
    const seen = `${response.status} ${response.headers.get('content-type')} ${text.slice(0, 300)} ${JSON.stringify(mine)}`;
    expect(mine, seen).toHaveLength(1);
    expect(text.includes('UPSTREAM_TOO_LARGE'), seen).toBe(true);
    expect(mine[0], seen).toMatchObject({
      status: response.status,
      msg: 'request completed',
      errorCode: 'UPSTREAM_TOO_LARGE',
    });
  },
);
