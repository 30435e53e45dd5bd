import { expect, it } from 'vitest';
import { untilServerCloses } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// 38293b7: the refusals the server sends itself carry the CORS headers of a listed origin, so a browser app reads the
// refusal and its code instead of "Failed to fetch". node:http's 408 for a body too slow (HTTP_REQUEST_TIMEOUT_MS: a
// stalled upload on a poor mobile link) is one of them, sent once the head, Origin included, was read: it named no
// origin, and the browser saw a network error.
const servers = closedAfterEach();
const origin = 'https://shop.example';

it('the 408 for a body too slow names a listed origin', async () => {
  const { facade } = await servers.start(echo, {
    CORS_ORIGINS: origin,
    HTTP_REQUEST_TIMEOUT_MS: '1000',
    HTTP_HEADERS_TIMEOUT_MS: '500',
  });
  // The client holds its end open: only the server can end this exchange.
  const answer = await untilServerCloses(
    facade.port,
    `POST /graphql HTTP/1.1\r\nHost: a\r\nOrigin: ${origin}\r\nContent-Type: application/json\r\n` +
      'Content-Length: 100\r\n\r\n{"query":',
  );
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  const head = answer.split('\r\n\r\n')[0]!.toLowerCase();
  expect(head).toContain(`access-control-allow-origin: ${origin}`);
  expect(head).toMatch(/^vary: .*\borigin\b/m);
});
