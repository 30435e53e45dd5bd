import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

const { start } = closedAfterEach();
const query = '{ classificationGroups(classificationId: "A") }';

// docs/operations.md: a redirect or a 2xx page that is not the PIM's JSON comes whatever the key (a proxy in front
// sends it), so it is no word on a key. The server's own key (PIM_API_KEY) refused by the PIM is logged at warn; a
// proxy's sign-in redirect (or maintenance page) that follows must not be logged as the key accepted again.
it.each([
  ['a redirect', (res: any) => res.writeHead(302, { location: 'https://sso.example/login' }).end()],
  [
    'a 2xx page that is not JSON',
    (res: any) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Maintenance</html>'),
  ],
])('%s after the server key is refused does not log the key accepted again', async (_name, page) => {
  const { logger, lines } = captureLogs('info');
  let proxy = false;
  const { facade } = await start(
    (_req, res) => {
      if (proxy) return page(res);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    },
    { PIM_API_KEY: 'server-key-0001', PIM_CACHE: 'false', PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' },
    { logger },
  );
  expect((await facade.post(query)).body.errors[0].extensions.code).toBe('SERVER_CREDENTIALS_REJECTED');
  proxy = true;
  expect((await facade.post(query)).body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  // The fault log writes at most a line per 10 s; a change still waiting is written when the façade shuts down.
  await facade.server.shutdown();
  const keyLines = lines.map((line) => line.msg).filter((msg: string) => /server key/.test(msg));
  expect(keyLines).toEqual([expect.stringMatching(/refuses the server key/)]);
});
