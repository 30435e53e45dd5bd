/**
 * The two façades of `bench/ab.ts` in one process, one port each: A from `base` (another checkout,
 * `floor` for the plain-Yoga floor, or this checkout), B from this checkout with `env` added to its settings. Reports `{ urls }` over IPC once
 * both listen, then answers each message with the requests each has served and the process's CPU.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [upstreamUrl, base, env] = process.argv.slice(2) as [string, string, string];

async function facade(root: string, extra: Record<string, string>): Promise<Server> {
  const load = (file: string) => import(pathToFileURL(join(root, 'src', file)).href);
  const [{ createApp }, { loadConfig }, { createServer }, { createLogger }] = await Promise.all(
    ['app.ts', 'config.ts', 'http/server.ts', 'logger.ts'].map(load),
  );
  const config = loadConfig({ NODE_ENV: 'production', PIM_BASE_URL: upstreamUrl, ...extra });
  return createServer(createApp({ ...config, pimBaseUrl: upstreamUrl }, createLogger(config.logLevel)), config.http);
}

// `floor` as the base: the plain-Yoga floor of bench/floor.ts, with the façade's default 16 upstream connections.
async function floor(): Promise<Server> {
  const { createFloor } = await import('./floor.ts');
  return createHttpServer(createFloor(upstreamUrl, 16));
}

const here = join(import.meta.dirname, '..');
const servers = [
  await (base === 'floor' ? floor() : facade(base || here, {})),
  await facade(here, JSON.parse(env) as Record<string, string>),
];
const served = servers.map(() => 0);
const urls = await Promise.all(
  servers.map((server, i) => {
    server.on('request', () => served[i]!++);
    server.keepAliveTimeout = 60_000;
    return new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  }),
);
process.send!({ urls });
// The whole process's CPU, and the main thread's alone: the rest is V8's helper threads (GC) and libuv's.
process.on('message', () => process.send!({ served, cpu: process.cpuUsage(), main: process.threadCpuUsage() }));
