import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { expect, it, onTestFinished } from 'vitest';
import { echo, startUpstream } from '../helpers/upstream.ts';
import { startProcess } from '../helpers/process.ts';

// With METRICS_PORT (as deploy/kubernetes sets it) the purge is served on the metrics port. SIGTERM closed that
// listener's connections at once, so a purge under way when a rolling update began was cut; it is answered as the
// main port's requests in flight are. With nothing in flight on the main port (a CMS hook's purge, alone), the app
// closed and the process exited under it.
it.each([
  ['a GraphQL request is in flight too', true],
  ['nothing else is in flight', false],
])('answers a purge whose body arrives after SIGTERM on the metrics port: %s', async (_, busy) => {
  const held: Array<() => void> = [];
  const upstream = await startUpstream((req, res: ServerResponse) => void held.push(() => echo(req, res)));
  onTestFinished(() => upstream.close());
  const token = 'a-long-enough-admin-token';
  const server = startProcess(process.execPath, ['src/main.ts'], {
    env: {
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PIM_BASE_URL: upstream.url,
      CACHE_ADMIN_TOKEN: token,
      SHUTDOWN_GRACE_MS: '10000',
    },
  });
  onTestFinished(() => server.kill());
  const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
  const metricsPort = Number(await server.waitFor(/Metrics served at http:\/\/127\.0\.0\.1:(\d+)/));

  // A GraphQL request held at the PIM keeps the main port's shutdown under way.
  const inFlight =
    busy &&
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ classificationGroups(classificationId: "A") }' }),
    }).then((response) => response.status);
  await expect.poll(() => held.length).toBe(busy ? 1 : 0);

  const body = '{"catalogId":"MASTER"}';
  const socket = connect(metricsPort, '127.0.0.1');
  onTestFinished(() => void socket.destroy());
  await once(socket, 'connect');
  socket.write(
    `POST /cache/invalidate HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n` +
      `content-type: application/json\r\ncontent-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`,
  );
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
  const closed = once(socket, 'close');

  // The server's 100 Continue says it has the request, and waits for its body.
  await expect.poll(() => answer).toMatch(/^HTTP\/1\.1 100 /);
  server.child.kill('SIGTERM');
  await server.waitFor(/received, shutting down/);
  socket.write(body);
  await expect.poll(() => answer).toMatch(/\r\n\r\nHTTP\/1\.1 \d+[\s\S]*\r\n\r\n[\s\S]+/);
  expect(answer.split('\r\n\r\n')[1]).toMatch(/^HTTP\/1\.1 200 /);

  held.forEach((release) => release());
  if (inFlight) expect(await inFlight).toBe(200);
  expect(await server.exited).toBe(0);
  await closed;
});
