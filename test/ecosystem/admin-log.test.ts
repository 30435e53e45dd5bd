import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMetricsServer } from '../../src/http/metrics-server.ts';
import { startFacade } from '../helpers/facade.ts';
import { startUpstream } from '../helpers/upstream.ts';
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
