import { expect, it } from 'vitest';
import { untilServerCloses } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

// node:http's own refusals went out with no log line and no count, so a pod refusing every client with oversized
// cookies (431) showed nothing; its 408 for a body too slow was logged without the code every other refusal carries.
const servers = closedAfterEach();

async function start() {
  const { logger, lines } = captureLogs('info');
  const env = { HTTP_MAX_HEADER_BYTES: '1024', HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '500' };
  const { facade } = await servers.start(echo, env, { logger });
  const refusedCount = async (status: number) =>
    Number(
      new RegExp(`^http_requests_refused_total\\{status="${status}"\\} (\\d+)$`, 'm').exec(
        (await facade.app.metrics()).body,
      )?.[1] ?? 0,
    );
  return { facade, lines, refusedCount };
}

it.each([
  ['a head too large', `GET /graphql?query=${'x'.repeat(3_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, 431, '-', '-'],
  ['a head that is not HTTP', 'GET /graphql HTTP/1.1\r\nHost a\r\n\r\n', 400, '-', '-'],
  ['a CONNECT', 'CONNECT pim.example:443 HTTP/1.1\r\nHost: pim.example:443\r\n\r\n', 405, 'CONNECT', 'pim.example:443'],
])('%s is logged and counted as a refusal', async (_kind, bytes, status, method, path) => {
  const { facade, lines, refusedCount } = await start();
  const answer = await untilServerCloses(facade.port, bytes);
  expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  await expect.poll(() => refusedCount(status)).toBe(1);
  expect(lines.filter((line) => line.msg === 'request completed')).toMatchObject([
    { method, path, status, errors: 1, errorCode: expect.any(String) },
  ]);
});

it('a body too slow (408) is logged with its code and counted as a refusal', async () => {
  const { facade, lines, refusedCount } = await start();
  const answer = await untilServerCloses(
    facade.port,
    'POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":',
  );
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  await expect.poll(() => refusedCount(408)).toBe(1);
  await expect
    .poll(() => lines.filter((line) => line.msg === 'request completed'))
    .toMatchObject([{ method: 'POST', path: '/graphql', status: 408, errors: 1, errorCode: 'REQUEST_TIMEOUT' }]);
});
