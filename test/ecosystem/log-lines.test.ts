import { afterEach, describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

const { start } = closedAfterEach();
const leaving = new AbortController();
afterEach(() => leaving.abort());

// docs/operations.md, Logs: one `request completed` line per request. Refusals are requests too: load shedding and
// size refusals are what an operator most needs to see, in the log and in the metrics.
describe('refused requests in the log and the metrics', () => {
  it('logs one line with the request id for each refusal, echoes the id, and counts the server refusals', async () => {
    const { logger, lines } = captureLogs('info');
    const { upstream, facade } = await start(
      () => undefined,
      { HTTP_MAX_IN_FLIGHT: '1', PIM_CACHE: 'false' },
      { logger },
    );
    const send = (id: string, init: RequestInit) =>
      facade.request('/graphql', { ...init, headers: { ...(init.headers as object), 'x-request-id': id } });
    const json = { 'content-type': 'application/json' };
    const query = JSON.stringify({ query: '{ classificationGroups(classificationId: "A") }' });

    const form = await send('form', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: query });
    const big = await send('big', { method: 'POST', headers: json, body: 'x'.repeat(70_000) });
    // Never answered upstream: it stays in flight and holds the one slot.
    void fetch(facade.url, { method: 'POST', headers: json, body: query, signal: leaving.signal }).catch(() => {});
    await expect.poll(() => upstream.requests.length).toBe(1);
    const busy = await send('busy', { method: 'POST', headers: json, body: query });

    expect([form, big, busy].map((r) => [r.status, r.headers.get('x-request-id')])).toEqual([
      [415, 'form'],
      [413, 'big'],
      [503, 'busy'],
    ]);
    const logged = (id: string) => lines.filter((l) => l.reqId === id).map((l) => [l.msg, l.status, l.path]);
    await expect.poll(() => logged('busy')).toHaveLength(1);
    expect({ form: logged('form'), big: logged('big'), busy: logged('busy') }).toEqual({
      form: [['request completed', 415, '/graphql']],
      big: [['request completed', 413, '/graphql']],
      busy: [['request completed', 503, '/graphql']],
    });
    const metrics = await (await fetch(`${facade.origin}/metrics`)).text();
    expect(metrics).toContain('http_requests_refused_total{status="413"} 1');
    expect(metrics).toContain('http_requests_refused_total{status="503"} 1');
  });

  it('gives a refusal without a usable id a new one, and never logs the headers', async () => {
    const { logger, lines } = captureLogs('info');
    const { facade } = await start(echo, {}, { logger });
    const response = await facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'bad id\n', 'x-api-key': 'secret-key-value' },
      body: 'x'.repeat(70_000),
    });
    expect(response.status).toBe(413);
    const id = response.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(() => lines.filter((l) => l.reqId === id)).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain('secret-key-value');
  });
});

// The metrics' duration of an operation runs "until the last deferred part"; its log line said when the first went out.
describe('the line of a streamed (@defer) answer', () => {
  it('is written when the last part is out, with the whole duration', async () => {
    const { logger, lines } = captureLogs('info');
    const slowDeferred = (req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) =>
      req.url?.includes('/SLOW/') ? void setTimeout(() => echo(req, res), 1_000) : echo(req, res);
    const { facade } = await start(slowDeferred, { PIM_CACHE: 'false' }, { logger });
    const response = await facade.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'deferred' },
      body: JSON.stringify({
        query:
          'query D { fast: catalogProducts(catalogId: "FAST") ... @defer { slow: catalogProducts(catalogId: "SLOW") } }',
      }),
    });
    expect(response.status).toBe(200);
    expect(response.text).toContain('"hasNext":false');
    await expect.poll(() => lines.filter((l) => l.reqId === 'deferred')).toHaveLength(1);
    const [line] = lines.filter((l) => l.reqId === 'deferred');
    expect(line).toMatchObject({ msg: 'request completed', status: 200, operations: ['query D'] });
    expect(line!.durationMs).toBeGreaterThanOrEqual(1_000);
  });
});
