import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMetricsServer } from '../../src/http/metrics-server.ts';
import { closedAfterEach, startFacade } from '../helpers/facade.ts';
import { echo, startUpstream } from '../helpers/upstream.ts';
import { captureLogs } from '../helpers/logs.ts';

const TOKEN = 'a'.repeat(32);
const invalidation = (token: string, id: string, body: string) => ({
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': id },
  body,
});

// docs/operations.md, Logs: one `request completed` line per request, refusals included, its id in x-request-id.
// POST /cache/invalidate, answered outside Yoga on either port, had no line, no id and no count, a refused token
// included: neither failed attempts nor the invalidations that emptied the caches left a trace.
describe.each([
  ['the main port', false],
  ['the metrics port', true],
])('POST /cache/invalidate on %s', (_port, ownPort) => {
  it('gets its request completed line and x-request-id, and a refused token counts as a refusal', async () => {
    const upstream = await startUpstream();
    const logs = captureLogs('info');
    const env = { CACHE_ADMIN_TOKEN: TOKEN, ...(ownPort ? { METRICS_PORT: '0' } : {}) };
    const facade = await startFacade(upstream.url, env, { logger: logs.logger });
    const metrics = ownPort
      ? createMetricsServer(facade.app.metrics, '/metrics', facade.app.invalidation?.handle)
      : undefined;
    await new Promise<void>((resolve) => (metrics ? metrics.listen(0, '127.0.0.1', resolve) : resolve()));
    try {
      const origin = metrics ? `http://127.0.0.1:${(metrics.address() as AddressInfo).port}` : facade.origin;
      const wrong = await fetch(`${origin}/cache/invalidate`, invalidation('nope', 'audit-1', '{"all":true}'));
      const right = await fetch(`${origin}/cache/invalidate`, invalidation(TOKEN, 'audit-2', '{"catalogId":"M"}'));
      expect([wrong.status, right.status]).toEqual([401, 200]);
      expect([wrong.headers.get('x-request-id'), right.headers.get('x-request-id')]).toEqual(['audit-1', 'audit-2']);
      const completed = () => logs.lines.filter((l) => l.msg === 'request completed' && l.path === '/cache/invalidate');
      await expect
        .poll(() => completed().map((l) => [l.reqId, l.method, l.status]))
        .toEqual([
          ['audit-1', 'POST', 401],
          ['audit-2', 'POST', 200],
        ]);
      expect((await facade.app.metrics()).body).toMatch(/^http_requests_refused_total\{status="401"\} 1$/m);
    } finally {
      metrics?.close();
      metrics?.closeAllConnections();
      await facade.close();
      await upstream.close();
    }
  });
});

const servers = closedAfterEach();

// docs/operations.md: http_requests_refused_total{status="503"} is HTTP_MAX_IN_FLIGHT load shedding, and of
// POST /cache/invalidate it counts the refused 401/400/405. An invalidation the shared cache could not take (Redis
// down) is no refusal of the server: counted as a 503 refusal, it reads as load shedding (an alert to scale out).
it('an invalidation Redis could not record is not counted as a refused (load-shed) request', async () => {
  const logs = captureLogs('info');
  const { facade } = await servers.start(
    echo,
    { CACHE_ADMIN_TOKEN: TOKEN, REDIS_URL: 'redis://127.0.0.1:1' },
    { logger: logs.logger },
  );
  const res = await fetch(`${facade.origin}/cache/invalidate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-request-id': 'inv-1' },
    body: '{"all":true}',
  });
  expect(res.status).toBe(503);
  await expect
    .poll(() => logs.lines.filter((l) => l.msg === 'request completed' && l.reqId === 'inv-1').map((l) => l.status))
    .toEqual([503]);
  expect((await facade.app.metrics()).body).not.toMatch(/^http_requests_refused_total\{status="503"\} [1-9]/m);
}, 20_000);

// docs/operations.md, Logs: one line per request; "a client that disconnects first gets one info line `client went
// away` instead". An admin client that leaves while sending the body of its invalidation left no line at all: the
// wrapper waits for 'finish', which a response on a destroyed socket never emits.
it('an invalidation whose client leaves mid-body still gets its one log line', async () => {
  const logs = captureLogs('info');
  const { facade } = await servers.start(echo, { CACHE_ADMIN_TOKEN: TOKEN }, { logger: logs.logger });
  const socket = connect(facade.port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    'POST /cache/invalidate HTTP/1.1\r\nhost: 127.0.0.1\r\n' +
      `authorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n` +
      'x-request-id: inv-left\r\n\r\n{"all":',
  );
  // Time for the server to read the head and start on the body.
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.destroy();
  await expect
    .poll(() => logs.lines.filter((l) => l.reqId === 'inv-left').map((l) => l.msg))
    .toEqual(['client went away']);
}, 20_000);
