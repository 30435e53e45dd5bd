/**
 * One server of the benchmark, run in its own process so its CPU and memory are measured apart
 * from the load generator. `tsx bench/server.ts <kind> '<json options>'`; it reports `{ url }`
 * over IPC once listening and answers `stats` messages.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getHeapSpaceStatistics } from 'node:v8';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createServer as createFacadeServer } from '../src/http/server.ts';
import { createLogger } from '../src/logger.ts';
import { createFloor } from './floor.ts';
import { pricedPlugins, type PricedPlugin } from './priced-plugins.ts';
import { createBenchUpstream, createCollectorStub } from './upstream.ts';

type Kind = 'upstream' | 'collector' | 'facade' | 'floor' | 'variants';
interface Variant {
  kind?: 'floor' | 'facade';
  env?: Record<string, string>;
  /** Façade plugins the floor runs, to price them. */
  plugins?: PricedPlugin[];
}
const [kind, json = '{}'] = process.argv.slice(2) as [Kind, string?];
const options = JSON.parse(json) as { upstreamUrl?: string; variants?: Variant[] } & Variant;

let served = 0;
let peakRss = 0;
const sampleRss = () => (peakRss = Math.max(peakRss, process.memoryUsage.rss()));
setInterval(sampleRss, 25).unref();

// The façade as `npm start` runs it in production: same node:http server, the real logger on
// stdout (which the bench points at /dev/null), every other setting at its default.
function facade({ env }: Variant): Server {
  const pimBaseUrl = options.upstreamUrl!;
  const config = loadConfig({ NODE_ENV: 'production', PIM_BASE_URL: pimBaseUrl, ...env });
  const app = createApp({ ...config, pimBaseUrl }, createLogger(config.logLevel));
  return createFacadeServer(app, config.http);
}

// As many upstream connections as the façade's default PIM_MAX_CONCURRENCY; plugins configured as in production.
function floor({ plugins = [] }: Variant): Server {
  const config = loadConfig({ NODE_ENV: 'production', PIM_BASE_URL: options.upstreamUrl });
  return createServer(createFloor(options.upstreamUrl!, 16, pricedPlugins(plugins, config)));
}

const servers: Record<Kind, () => Server[]> = {
  upstream: () => [createServer(createBenchUpstream())],
  collector: () => [createServer(createCollectorStub())],
  facade: () => [facade(options)],
  // Several servers in one process, one port each: the bill compares them with one heap and one JIT.
  variants: () => options.variants!.map((v) => (v.kind === 'floor' ? floor(v) : facade(v))),
  floor: () => [floor(options)],
};
const listening = servers[kind]();
const servedBy = listening.map(() => 0);
const urls = await Promise.all(
  listening.map((server, i) => {
    server.on('request', () => (served++, servedBy[i]!++));
    server.keepAliveTimeout = 60_000;
    return new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  }),
);
process.send!({ type: 'ready', url: urls[0], urls });
process.on('message', (m: { type: string; gc?: boolean }) => {
  if (m.type !== 'stats') return;
  sampleRss();
  if (m.gc) (globalThis as { gc?: () => void }).gc?.();
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  process.send!({
    type: 'stats',
    served,
    servedBy,
    cpu: process.cpuUsage(),
    rss: process.memoryUsage.rss(),
    memory: { ...process.memoryUsage(), newSpace },
    peakRss,
  });
  peakRss = 0;
});
process.on('disconnect', () => process.exit(0));
