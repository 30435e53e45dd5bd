import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// A failure that says `max-age=60` (a proxy's maintenance page, a PIM's overload answer, a redirect, never followed:
// an error here) was kept by the HTTP cache and replayed for a minute after the PIM had recovered: no call reached
// it, and each replay counted as an upstream fault until the breaker opened for every caller. So was a 200 that is
// no answer (a gateway's login or maintenance page, a body cut short, even right after one of its objects): such a
// replay is now dropped and the PIM asked.
const json = 'application/json';
it.each([
  ['a 503', 503, json, '{}'],
  ['a 500', 500, json, '{}'],
  ['a 429', 429, json, '{}'],
  ['a 301', 301, json, '{}'],
  ['a 308', 308, json, '{}'],
  ['a 200 that is an HTML page', 200, 'text/html', '<html>back soon</html>'],
  ['a 200 that is JSON but no envelope', 200, json, '"maintenance"'],
  ['a 200 cut short', 200, json, '{"status":200,"data":['],
  ['a 200 cut short after one of its items', 200, json, '{"status":200,"meta":{},"data":[{"id":"g1"},{"id":"g2"}'],
  ['a 200 cut short after a nested object', 200, json, '{"status":200,"meta":{"languageId":"de"}'],
])('never answers again with %s, however long it says it may be kept', async (_name, status, type, body) => {
  const { upstream, facade } = await servers.start(
    (_req, res, index) =>
      index === 0
        ? res.writeHead(status, { 'content-type': type, 'cache-control': 'max-age=60' }).end(body)
        : res.writeHead(200, { 'content-type': json }).end('{"status":200,"data":[]}'),
    { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' },
  );
  const query = '{ classificationGroups(classificationId: "C") }';
  expect((await facade.post(query)).body.errors).toHaveLength(1);
  for (let i = 0; i < 12; i++) {
    expect((await facade.post(query)).body).toEqual({ data: { classificationGroups: { status: 200, data: [] } } });
  }
  // Each request reached the PIM once: the broken replay was dropped before it counted as a fault.
  expect(upstream.requests).toHaveLength(13);
  expect(facade.app.upstream.breaker).toBe('closed');
  const faults = /^pim_upstream_faults_total\{fault="not_json"\} (\d+)$/m.exec((await facade.get('/metrics')).text);
  expect(Number(faults?.[1] ?? 0)).toBe(status === 200 ? 1 : 0);
});
