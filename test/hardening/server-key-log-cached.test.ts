import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

const { start } = closedAfterEach();

// docs/operations.md, Readiness: the server key refused (a 401 to a call carrying only PIM_API_KEY) is logged at warn
// when it starts and at info when it ends. An answer the HTTP cache replays, which never reached the PIM (its 404 for a
// group that does not exist, kept a minute), is no word of the PIM's on the key: it was logged as the key accepted
// again while the PIM still refused it (the breaker likewise ignores what the HTTP cache answered).
it('an answer the HTTP cache replays does not log the refused server key accepted again', async () => {
  const { logger, lines } = captureLogs('info');
  let revoked = false;
  const { upstream, facade } = await start(
    (_req, res) => {
      if (revoked) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}');
      res
        .writeHead(404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
        .end('{"status":404,"error":"Not found"}');
    },
    { PIM_API_KEY: 'server-key-0001', PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' },
    { logger },
  );
  const gone = '{ classificationGroups(classificationId: "GONE") }';
  expect((await facade.post(gone)).body.errors[0].extensions.code).toBe('NOT_FOUND');
  revoked = true;
  const other = await facade.post('{ classificationGroups(classificationId: "OTHER") }');
  expect(other.body.errors[0].extensions.code).toBe('SERVER_CREDENTIALS_REJECTED');
  // The kept 404, replayed: the PIM is not asked.
  expect((await facade.post(gone)).body.errors[0].extensions.code).toBe('NOT_FOUND');
  expect(upstream.requests).toHaveLength(2);
  // The fault log writes at most a line per 10 s; a change still waiting is written when the façade shuts down.
  await facade.server.shutdown();
  const keyLines = lines.map((line) => line.msg).filter((msg: string) => /server key/.test(msg));
  expect(keyLines).toEqual([expect.stringMatching(/refuses the server key/)]);
});
