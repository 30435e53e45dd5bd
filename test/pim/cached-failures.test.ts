import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// A 503 that says `max-age=60` (a proxy's maintenance page, a PIM's overload answer) was kept by the HTTP
// cache and replayed for a minute after the PIM had recovered: no call reached it, and each replay counted
// as an upstream fault until the breaker opened for every caller. A redirect (never followed: an error here) the same.
it.each([503, 500, 429, 301, 308])('never keeps a %i, however long it says it may be kept', async (status) => {
  const { upstream, facade } = await servers.start(
    (_req, res, index) =>
      index === 0
        ? res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end('{}')
        : res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200,"data":[]}'),
    { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' },
  );
  const query = '{ classificationGroups(classificationId: "C") }';
  expect((await facade.post(query)).body.errors).toHaveLength(1);
  for (let i = 0; i < 12; i++) {
    expect((await facade.post(query)).body).toEqual({ data: { classificationGroups: { status: 200, data: [] } } });
  }
  expect(upstream.requests).toHaveLength(13);
  expect(facade.app.upstream.breaker).toBe('closed');
});

// A 200 that is no answer (a gateway's login or maintenance page, a body cut short) with `max-age=60` was kept
// by the HTTP cache like any 2xx and replayed for the minute: no call reached the recovered PIM, each replay
// counted as its not_json fault, and the breaker opened for every caller.
it.each([
  ['an HTML page', 'text/html', '<html>back soon</html>'],
  ['JSON that is no envelope', 'application/json', '"maintenance"'],
  ['an envelope cut short', 'application/json', '{"status":200,"data":['],
])('never keeps a 200 that is %s', async (_name, type, body) => {
  const { upstream, facade } = await servers.start(
    (_req, res, index) =>
      index === 0
        ? res.writeHead(200, { 'content-type': type, 'cache-control': 'max-age=60' }).end(body)
        : res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200,"data":[]}'),
    { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' },
  );
  const query = '{ classificationGroups(classificationId: "C") }';
  expect((await facade.post(query)).body.errors).toHaveLength(1);
  for (let i = 0; i < 12; i++) {
    expect((await facade.post(query)).body).toEqual({ data: { classificationGroups: { status: 200, data: [] } } });
  }
  expect(upstream.requests).toHaveLength(13);
  expect(facade.app.upstream.breaker).toBe('closed');
});
