import { expect, it } from 'vitest';
import { untilServerCloses } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

// A client that sends its head and then its body too slowly (a slow-POST attack, or a stalled uploader) is refused by
// the server with 408 REQUEST_TIMEOUT once HTTP_REQUEST_TIMEOUT_MS has passed (docs/operations.md lists 408 among
// the refusals; configuration.md: "time to send the whole request"). The client did not go away: it got that answer.
// docs/operations.md, Monitoring: "a client that disconnects first gets one info line `client went away`", and
// `graphql_client_disconnects_total` counts "requests whose client went away". The 408 is logged and counted as a
// client that went away, so an operator reads a slow-body attack as impatient clients, and sees no 408 anywhere.
const servers = closedAfterEach();

it('logs and counts a request the server timed out (408) as refused, not as a client that went away', async () => {
  const { logger, lines } = captureLogs('info');
  const { facade } = await servers.start(
    echo,
    { HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '500' },
    {
      logger,
    },
  );
  // The client holds its end open: only the server can end this exchange.
  const answer = await untilServerCloses(
    facade.port,
    'POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nx-request-id: slow-body\r\n' +
      'Content-Length: 100\r\n\r\n{"query":',
  );
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
  await expect.poll(() => lines.filter((l) => l.reqId === 'slow-body').length).toBeGreaterThan(0);
  const metrics = (await facade.get('/metrics')).text;
  expect(lines.filter((l) => l.reqId === 'slow-body').map((l) => [l.msg, l.status])).toEqual([
    ['request completed', 408],
  ]);
  expect(metrics).toMatch(/^graphql_client_disconnects_total 0$/m);
});
