import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

const { start } = closedAfterEach();
const query = '{ classificationGroups(classificationId: "A") }';

// upstream-log.ts writes at most one line per interval per condition, a change inside it when it ends. A state log
// closed at shutdown (before the pool is destroyed, so what that cuts is not logged) dropped the change still waiting:
// the PIM's maintenance page was logged (warn), its end 3 s later never was, and the last line of the replica says the
// PIM answers with something that is not JSON.
it('a change of the upstream state still waiting to be written at shutdown is written', async () => {
  const { logger, lines } = captureLogs('info');
  let page = true;
  const { facade } = await start(
    (req, res) => {
      if (page) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Maintenance</html>');
      echo(req, res);
    },
    { PIM_CACHE: 'false', PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0', SHUTDOWN_GRACE_MS: '300' },
    { logger },
  );
  expect((await facade.post(query)).body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  page = false;
  expect((await facade.post(query)).status).toBe(200);
  await facade.server.shutdown();
  const messages = lines.map((line) => line.msg);
  expect(messages).toContainEqual(expect.stringMatching(/not JSON/));
  expect(messages).toContain('Upstream answers JSON again');
});
