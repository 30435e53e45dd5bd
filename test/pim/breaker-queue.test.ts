import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

const servers = closedAfterEach();

// The breaker decides before the connection queue, and nothing asked it again when a queued call got its
// slot: with a PIM that never answers, every queued call still went to it, 12 at a time, each waiting out
// its timeout, and every client waited out its whole budget though the breaker had said "fail fast".
it('fails the calls still queued when the breaker opens, without sending them', async () => {
  const { logger, lines } = captureLogs('info');
  const { facade, upstream } = await servers.start(
    () => undefined,
    { PIM_TIMEOUT_MS: '500', PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0', GRAPHQL_BUDGET_MS: '20000' },
    { logger },
  );
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => facade.post(`{ classificationGroups(classificationId: "C${i}") }`)),
  );
  const codes = answers.map(({ body }) => body.errors[0].extensions.code as string);
  // One credential's share of the 16 connections (12) times out; at ten faults the breaker sends its own probe,
  // which times out too, while the calls that took the freed slots meanwhile go (a failure is counted after its
  // slot is free): three rounds of the share at most, and the probe (five rounds before: all 60 sent).
  expect(upstream.requests.filter((r) => !r.url.includes('readiness-probe')).length).toBeLessThanOrEqual(36);
  expect(upstream.requests.filter((r) => r.url.includes('readiness-probe'))).toHaveLength(1);
  expect(codes.filter((code) => code === 'UPSTREAM_TIMEOUT').length).toBeLessThanOrEqual(36);
  expect(codes.filter((code) => code === 'UPSTREAM_UNAVAILABLE').length).toBeGreaterThanOrEqual(24);
  expect(facade.app.upstream.breaker).toBe('open');
  // The calls the breaker stopped say nothing new of the upstream: the log says it times out, no more.
  expect(
    lines.filter((line) => line.msg === 'Upstream not answering').map(({ code, cause }) => ({ code, cause })),
  ).toEqual([{ code: 'UPSTREAM_TIMEOUT', cause: undefined }]);
});
