import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { createApp, type App } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createDemoService } from './demo/service.ts';
import { API_PREFIX } from './pim/endpoints.ts';
import { createLogger } from './logger.ts';
import { createServer } from './http/server.ts';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(config.logLevel);
const demo = config.pimBaseUrl ? undefined : createServerAdapter(createDemoService());
let app: App | undefined;

const server = createServer(() => app, {
  ...config.http,
  routes: (req, res) => {
    if (!demo || !req.url?.startsWith(`${API_PREFIX}/`)) return false;
    void demo(req, res);
    return true;
  },
});

server.once('error', (error) => {
  console.error(`Cannot listen on ${config.host ?? 'all interfaces'} port ${config.port}: ${error.message}`);
  process.exit(1);
});

server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  // The demo lives on this same server; the façade reaches it over loopback like any upstream.
  const pimBaseUrl = config.pimBaseUrl ?? `http://${loopbackHost(config.host)}:${port}`;
  app = createApp({ ...config, pimBaseUrl }, logger);
  if (demo) logger.info(`No PIM_BASE_URL set: serving the bundled demo catalog at ${pimBaseUrl}${API_PREFIX}`);
  logger.info({ upstream: new URL(pimBaseUrl).origin }, `GraphQL server ready at http://localhost:${port}/graphql`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    logger.info(`${signal} received, shutting down`);
    // A pool or cache that will not close must not keep the process from exiting.
    const grace = config.http.shutdownGraceMs ?? 10_000;
    setTimeout(() => process.exit(1), grace + 5_000).unref();
    void server.shutdown().finally(() => process.exit(0));
  });
}

/** Where this process can reach its own server: loopback when listening on all interfaces. */
function loopbackHost(host: string | undefined): string {
  if (!host || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
