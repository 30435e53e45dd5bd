import type { ServerResponse } from 'node:http';
import { expect, it, onTestFinished } from 'vitest';
import { echo, startUpstream } from '../helpers/upstream.ts';
import { startProcess } from '../helpers/process.ts';

// docs/operations.md: on SIGTERM or SIGINT every request already received is answered within SHUTDOWN_GRACE_MS,
// the waiting log lines are written and the process exits 0; "SIGINT after SIGTERM (or the reverse) joins the
// shutdown under way". main.ts listens with process.once, so the same signal twice (a supervisor or an operator
// repeating SIGTERM) meets Node's default action: the process dies at once, the request in flight is cut.
it.each([
  ['SIGTERM', 'SIGTERM'],
  ['SIGINT', 'SIGINT'],
])('%s then %s: the request in flight is still answered and the process exits 0', async (first, second) => {
  const held: Array<() => void> = [];
  const upstream = await startUpstream((req, res: ServerResponse) => void held.push(() => echo(req, res)));
  onTestFinished(() => upstream.close());
  const server = startProcess(process.execPath, ['src/main.ts'], {
    env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PIM_BASE_URL: upstream.url, SHUTDOWN_GRACE_MS: '10000' },
  });
  onTestFinished(() => server.kill());
  const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);

  const inFlight = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ classificationGroups(classificationId: "A") }' }),
  }).then(
    async (response) => response.status,
    (error: Error) => `failed: ${error.message}`,
  );
  await expect.poll(() => held.length).toBe(1);
  server.child.kill(first as NodeJS.Signals);
  await server.waitFor(/received, shutting down/);
  server.child.kill(second as NodeJS.Signals);
  // The PIM answers only after the second signal: the request is still in flight when it arrives.
  setImmediate(() => held.forEach((answer) => answer()));
  expect(await inFlight).toBe(200);
  expect(await server.exited).toBe(0);
});
