import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port nothing listens on (it was free a moment ago): for a refused connection, or for
 * a server that cannot listen on port 0 and report it (redis-server, varnishd).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
