/**
 * `npm run bench [-- --duration 3 --warmup 1 --soak 100000]`: starts a delayed upstream, the
 * façade and a plain Yoga floor in child processes on loopback, drives them with autocannon,
 * prints a table with the ratios against the targets, and writes it all to bench/results/.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { buildRequest } from '../src/pim/endpoints.ts';
import { load, startServer, type LoadOptions, type ServerProcess } from './load.ts';
import { report, type Row } from './report.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    soak: { type: 'string', default: '100000' },
    // For before/after experiments: settings of the façade, Node flags of every server, one scenario.
    'facade-env': { type: 'string', default: '{}' },
    'node-flags': { type: 'string', default: '' },
    only: { type: 'string' },
  },
});
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const soak = Number(values.soak);

const one = 'catalogProducts(catalogId: "MACHINERY", languageId: "en", pageSize: 20)';
// Pages of 5, so that all ten exist among the demo catalog's 72 machinery products.
const page = (i: number) => `a${i}: catalogProducts(catalogId: "MACHINERY", languageId: "en", pageSize: 5, page: ${i})`;
const ten = (alias: (i: number) => string) => Array.from({ length: 10 }, (_, i) => alias(i)).join(' ');
const queries = {
  one: `{ ${one} }`,
  three: `{ ${one} classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "MC-050000", levels: 1) classificationGroups(classificationId: "ECLASS-DEMO") }`,
  identical: `{ ${ten((i) => `a${i}: ${one}`)} }`,
  distinct: `{ ${ten(page)} }`,
};
const scenarios = [
  { name: 'one field', query: queries.one, connections: 10 },
  { name: 'one field, 1 connection', query: queries.one, connections: 1 },
  { name: 'all three fields', query: queries.three, connections: 10 },
  // One connection, so the counts show deduplication inside a request, not coalescing across requests.
  { name: '10 identical aliases', query: queries.identical, connections: 1 },
  { name: '10 distinct aliases', query: queries.distinct, connections: 1 },
  { name: '200 clients, same query', query: queries.one, connections: 200 },
  { name: 'repeated cacheable query', query: queries.one, connections: 10, cacheable: true },
];
const restPath = buildRequest(
  'searchProducts',
  { catalogId: 'MACHINERY', languageId: 'en', pageSize: 20 },
  { maxPageSize: 200, maxIdLength: 128 },
).path;

/** Warms up, then measures one target; CPU, RSS and upstream calls come from the server processes. */
async function measure(server: ServerProcess, upstream: ServerProcess, options: LoadOptions) {
  await load({ ...options, duration: warmup }, false);
  const [before, upBefore] = [await server.stats(), await upstream.stats()];
  const result = await load({ ...options, duration });
  const [after, upAfter] = [await server.stats(), await upstream.stats()];
  const served = after.served - before.served;
  const cpu = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
  return {
    ...result,
    cpuUsPerRequest: cpu / served,
    upstreamCallsPerRequest: server === upstream ? NaN : (upAfter.served - upBefore.served) / served,
    peakRssMB: after.peakRss / 2 ** 20,
  };
}

const graphql = (url: string, query: string, connections: number, key: string): LoadOptions => ({
  url: `${url}/graphql`,
  method: 'POST',
  body: JSON.stringify({ query }),
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  connections,
});

const flags = values['node-flags'].split(' ').filter(Boolean);
const facadeEnv = JSON.parse(values['facade-env']) as Record<string, string>;
const upstream = await startServer('upstream', {}, flags);
const facade = await startServer('facade', { upstreamUrl: upstream.url, env: facadeEnv }, flags);
const floor = await startServer('floor', {}, flags);
const rows: Row[] = [];
try {
  for (const delayMs of [0, 5]) {
    upstream.send({ type: 'set', delayMs });
    const rest = await measure(upstream, upstream, { url: `${upstream.url}${restPath}`, connections: 1 });
    rows.push({ server: 'direct REST', scenario: 'one call, 1 connection', delayMs, connections: 1, ...rest });
    for (const { name, query, connections, cacheable = false } of scenarios) {
      if (values.only && !values.only.split(';').includes(name)) continue;
      upstream.send({ type: 'set', delayMs, cacheable });
      // A credential per scenario keeps each one's cache entries to itself.
      const key = `bench-${delayMs}-${name}`;
      const result = await measure(facade, upstream, graphql(facade.url, query, connections, key));
      rows.push({ server: 'façade', scenario: name, delayMs, connections, ...result });
      if (delayMs === 0 && !cacheable) {
        const base = await measure(floor, upstream, graphql(floor.url, query, connections, key));
        rows.push({ server: 'Yoga floor', scenario: name, delayMs: NaN, connections, ...base });
      }
    }
  }
  upstream.send({ type: 'set', delayMs: 0, cacheable: false });
  // Memory over a long run: RSS after each quarter of the soak at 200 connections.
  const rssMB: number[] = [];
  const liveHeapMB: number[] = [];
  for (let quarter = 0; quarter < 4 && soak > 0; quarter++) {
    await load({ ...graphql(facade.url, queries.one, 200, 'bench-soak'), amount: soak / 4 }, false);
    rssMB.push((await facade.stats()).rss / 2 ** 20);
    liveHeapMB.push((await facade.stats(true)).heapUsed / 2 ** 20);
  }
  const results = {
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    duration,
    facadeEnv,
    nodeFlags: flags,
    rows,
    soak: { requests: soak, rssMB, liveHeapMB },
  };
  console.log(report(rows, results.soak));
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(`./results/bench-${results.at.replace(/[:.]/g, '-')}.json`, import.meta.url);
  await writeFile(file, JSON.stringify(results, null, 2));
  console.log(`\nWritten to bench/results/${file.pathname.split('/').pop()}`);
} finally {
  await Promise.all([upstream.stop(), facade.stop(), floor.stop()]);
}
