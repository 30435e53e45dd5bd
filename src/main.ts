import './check-node.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createMetricsServer } from './http/metrics-server.ts';
import { createServer } from './http/server.ts';
import { createLogger, endLogs } from './logger.ts';
import { API_PREFIX } from './pim/rest/endpoints.ts';

// How long the lines still waiting at exit may take to be written.
const LAST_LINES_MS = 1_500;
const config = orExit(() => loadConfig());
const logger = createLogger(config.logLevel, { pretty: config.development });
for (const line of config.warnings) logger.warn(line);
// Loaded only when served, and on a loopback listener of its own: production never carries it.
const demo = config.demo ? await (await import('./demo/service.ts')).listenDemoService() : undefined;
const pimBaseUrl = demo?.url ?? config.pimBaseUrl!;

// Building the app reads files named by settings (the trusted-document manifest): same one-line refusal.
const app = orExit(() => createApp({ ...config, pimBaseUrl }, logger));
const server = createServer(app, config.http);
const metrics =
  config.observability.metricsPort !== undefined && config.observability.metricsPath
    ? createMetricsServer(app.metrics, config.observability.metricsPath, app.invalidation?.handle)
    : undefined;
// Declared before the handlers that read them: a signal (or a crash) may come while the listeners below are awaited.
let shuttingDown = false;
let crashed = false;
// Every signal after the first joins the shutdown under way (the same one again too: Node's default action would
// end the process at once, cutting the requests in flight).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal));
process.on('uncaughtException', crash);

const origin = await listenOrExit(server, config.port);
const metricsOrigin = metrics && (await listenOrExit(metrics, config.observability.metricsPort!));
// Said once both listen: a start that fails on a busy port (METRICS_PORT too) serves nothing.
const replacing = config.pimBaseUrl ? ', in place of PIM_BASE_URL (PIM_DEMO=true)' : '';
if (demo) logger.info(`Serving the bundled demo catalog at ${demo.url}${API_PREFIX}${replacing}`);
logger.info({ upstream: new URL(pimBaseUrl).origin }, `GraphQL server ready at ${origin}/graphql`);
if (metricsOrigin !== undefined) logger.info(`Metrics served at ${metricsOrigin}${config.observability.metricsPath}`);

/** Stops accepting, lets requests in flight finish within the grace period, closes, exits 0; once. */
async function shutdown(signal: string): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  logger.info(`${signal} received, shutting down`);
  // A pool or cache that will not close must not keep the process from exiting: 5 s past the grace at most,
  // the last lines' time included (deploy/kubernetes/deployment.yaml counts on it).
  setTimeout(() => void exit(1), config.http.shutdownGraceMs + 5_000 - LAST_LINES_MS).unref();
  // A purge or scrape under way on the metrics port is answered too, before the app (its Redis) closes.
  await server.shutdown(metrics?.drain(config.http.shutdownGraceMs));
  await demo?.close();
  await exit(0);
}

/**
 * A bug nobody caught (unhandled rejections arrive here too): one error line, then the same bounded exit as
 * a shutdown. Node's own exit would print a stack that is not JSON, then wait on pino's synchronous flush,
 * for ever if stdout takes nothing; `logger.fatal` flushes the same way, hence `error`. Whatever is thrown
 * while exiting is not news.
 */
function crash(error: Error): void {
  if (crashed) return;
  crashed = true;
  logger.error({ err: error }, 'Uncaught exception, exiting');
  // Nothing new is taken on while the last lines are written.
  server.close();
  server.closeIdleConnections();
  void exit(1);
}

/** Exits once the log lines still waiting are written, or once LAST_LINES_MS have passed if stdout takes none. */
async function exit(code: number): Promise<never> {
  await endLogs(logger, LAST_LINES_MS);
  process.exit(code);
}

/** Runs a start-up step; a ConfigError stops the process with its one line, anything else throws. */
function orExit<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

/** Listens on the configured host, or stops the process with one line saying why it cannot; the origin it serves at. */
async function listenOrExit(listener: Server, port: number): Promise<string> {
  // Only while it starts listening: a later error is a crash, which drains, not a refusal to start.
  const refused = (error: Error) => {
    console.error(`Cannot listen on ${config.host ?? 'all interfaces'} port ${port}: ${error.message}`);
    process.exit(1);
  };
  listener.once('error', refused);
  await new Promise<void>((resolve) => listener.listen(port, config.host, resolve));
  listener.off('error', refused);
  const { address, port: bound } = listener.address() as AddressInfo;
  // Every interface is reached at localhost; one address (HOST) only at itself.
  const host = /^(0\.0\.0\.0|::)$/.test(address) ? 'localhost' : address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${bound}`;
}
