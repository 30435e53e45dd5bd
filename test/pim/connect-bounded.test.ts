import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// A PIM whose TLS handshake never ends (a firewall that takes the connection and drops the rest): the call's own time
// (PIM_TIMEOUT_MS) and the request's budget (GRAPHQL_BUDGET_MS) ended it only once the connect timed out, 8 s here,
// past both. They bound the whole call, its connect included.
const sockets = new Set<Socket>();
let silent: Server;
beforeAll(async () => {
  silent = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});
const servers = closedAfterEach();

it.each([
  ['PIM_TIMEOUT_MS', { PIM_TIMEOUT_MS: '500' }, 'UPSTREAM_TIMEOUT'],
  ['GRAPHQL_BUDGET_MS', { GRAPHQL_BUDGET_MS: '1000' }, 'BUDGET_EXCEEDED'],
])('%s bounds a call still connecting', async (_name, env, code) => {
  const { port } = silent.address() as AddressInfo;
  const facade = await servers.startFacade(`https://127.0.0.1:${port}`, {
    PIM_RETRIES: '0',
    PIM_CONNECT_TIMEOUT_MS: '8000',
    ...env,
  });
  const started = Date.now();
  const { body } = await facade.post('{ classificationGroups(classificationId: "A") }');
  expect(body.errors[0].extensions.code).toBe(code);
  expect(Date.now() - started).toBeLessThan(4_000);
});
