/**
 * One server of the benchmark, run in its own process so its CPU and memory are measured apart
 * from the load generator. `tsx bench/server.ts <upstream|facade|floor> '<json options>'`; it
 * reports `{ url }` over IPC once listening and answers `stats` and `set` messages.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { JSONResolver } from 'graphql-scalars';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDemoService } from '../src/demo/service.ts';
import { createServer as createFacadeServer } from '../src/http/server.ts';

type Kind = 'upstream' | 'facade' | 'floor';
const [kind, json = '{}'] = process.argv.slice(2) as [Kind, string?];
const options = JSON.parse(json) as { upstreamUrl?: string; env?: Record<string, string> };

let served = 0;
let peakRss = 0;
const sampleRss = () => (peakRss = Math.max(peakRss, process.memoryUsage.rss()));
setInterval(sampleRss, 25).unref();

// The upstream: the demo service's bodies, computed once per URL, sent after `delayMs`.
function upstream(): RequestListener {
  const demo = createDemoService();
  const bodies = new Map<string, { status: number; text: string }>();
  const settings = { delayMs: 0, cacheable: false };
  process.on('message', (m: { type: string; delayMs?: number; cacheable?: boolean }) => {
    if (m.type === 'set') Object.assign(settings, { delayMs: m.delayMs ?? 0, cacheable: m.cacheable ?? false });
  });
  return async (req, res) => {
    const url = req.url ?? '/';
    let body = bodies.get(url);
    if (!body) {
      const answer = await demo(new Request(`http://upstream${url}`));
      body = { status: answer.status, text: await answer.text() };
      bodies.set(url, body);
    }
    const { status, text } = body;
    const send = () =>
      res
        .writeHead(status, {
          'content-type': 'application/json',
          'cache-control': settings.cacheable ? 'max-age=600' : 'no-store',
        })
        .end(text);
    if (settings.delayMs > 0) setTimeout(send, settings.delayMs);
    else send();
  };
}

// The façade behind the same node:http server as `npm start`, with its limits and body checks.
function facade(): Server {
  const pimBaseUrl = options.upstreamUrl!;
  const config = loadConfig({ PIM_BASE_URL: pimBaseUrl, LOG_LEVEL: 'silent', ...options.env });
  return createFacadeServer(createApp({ ...config, pimBaseUrl }), config.http);
}

// The floor: plain Yoga, the same three fields, each answered from memory after the first call.
function floor(): RequestListener {
  const demo = createDemoService();
  const memory = new Map<string, unknown>();
  const inMemory = (path: string) => async (_: unknown, args: Record<string, unknown>) => {
    // Ids are in the path already; the remaining arguments become the query, as the façade sends them.
    const query = Object.entries(args).filter(([name]) => name === 'languageId' || !name.endsWith('Id'));
    const key = `${path}?${new URLSearchParams(query.map(([k, v]) => [k, String(v)]))}`;
    if (!memory.has(key)) memory.set(key, await (await demo(new Request(`http://upstream${key}`))).json());
    return memory.get(key);
  };
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      scalar JSON
      type Query {
        catalogProducts(catalogId: ID!, languageId: String, page: Int, pageSize: Int): JSON
        classificationGroup(classificationId: ID!, classificationGroupId: ID!, levels: Int): JSON
        classificationGroups(classificationId: ID!): JSON
      }
    `,
    resolvers: {
      JSON: JSONResolver,
      Query: {
        catalogProducts: inMemory('/pxm/pimapi/v1/catalogs/MACHINERY/products/search'),
        classificationGroup: inMemory('/pxm/pimapi/v1/classifications/ECLASS-DEMO/groups/MC-050000'),
        classificationGroups: inMemory('/pxm/pimapi/v1/classifications/ECLASS-DEMO/groups'),
      },
    },
  });
  const yoga = createYoga({ schema, logging: false, graphiql: false, landingPage: false });
  return yoga;
}

const server = kind === 'facade' ? facade() : createServer(kind === 'upstream' ? upstream() : floor());
server.on('request', () => served++);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}` });
});
process.on('message', (m: { type: string; gc?: boolean }) => {
  if (m.type !== 'stats') return;
  sampleRss();
  // After a full collection heapUsed is what is still reachable: the number that shows a leak.
  if (m.gc) (globalThis as { gc?: () => void }).gc?.();
  process.send!({
    type: 'stats',
    served,
    cpu: process.cpuUsage(),
    rss: process.memoryUsage.rss(),
    heapUsed: process.memoryUsage().heapUsed,
    peakRss,
  });
  peakRss = 0;
});
process.on('disconnect', () => process.exit(0));
