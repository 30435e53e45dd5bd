/**
 * `npm run bench:cache-hit [-- --calls 2000 --rounds 5]`: CPU per request of a cache hit
 * against an upstream call, sequentially, in this process, with the upstream in a child process
 * so its CPU is not counted. Measured through the client alone and through the whole app.
 */
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createPimClient } from '../src/pim/client.ts';
import { buildRequest } from '../src/pim/rest/endpoints.ts';
import { startServer } from './load.ts';
import { CACHEABLE_PREFIX } from './upstream.ts';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

const upstream = await startServer('upstream');
const config = loadConfig({ PIM_BASE_URL: upstream.url, LOG_LEVEL: 'silent' });
const app = createApp({ ...config, pimBaseUrl: upstream.url });
// The app's client is not exported: an equal one, configured the way app.ts does it.
const client = createPimClient({
  ...config.pim,
  baseUrl: upstream.url,
  credentialHeaders: config.credentials.forwardHeaders,
  cache: config.pim.cache && { ...config.pim.cache, onError: () => undefined },
  stale: { ...config.pim.stale, onError: () => undefined },
  probe: { ...config.pim.probe, headers: {} },
});
const limits = { maxPageSize: 200, maxIdLength: 128 };
// The plain id is answered `no-store` (every call goes upstream), the prefixed one `max-age=60` (hits after the first).
const catalogOf = (hit: boolean) => `${hit ? CACHEABLE_PREFIX : ''}MACHINERY`;
const viaClient = (hit: boolean) => async (i: number) => {
  const args = { catalogId: catalogOf(hit), languageId: 'en', pageSize: 20 };
  const request = buildRequest('searchProducts', args, limits);
  const headers = { 'x-api-key': 'bench', 'x-request-id': String(i) };
  const bytes = client.openByteAccount('bench');
  await client.get(request, { headers, deadline: Date.now() + 10_000, bytes });
  bytes.release();
};
const viaApp = (hit: boolean) => async () => {
  const query = `{ catalogProducts(catalogId: "${catalogOf(hit)}", languageId: "en", pageSize: 20) }`;
  const response = await app.yoga.fetch('http://localhost/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
    body: JSON.stringify({ query }),
  });
  await response.text();
};

// CPU µs per call of `call` over `calls` sequential calls, after a warm-up.
async function measure(call: (i: number) => Promise<void>): Promise<number> {
  for (let i = 0; i < 200; i++) await call(i);
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await call(i);
  const { user, system } = process.cpuUsage(start);
  return (user + system) / calls;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cases = {
  'client call': viaClient(false),
  'client hit': viaClient(true),
  'app call': viaApp(false),
  'app hit': viaApp(true),
};
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, [] as number[]]));
let served = 0;
for (let round = 0; round < rounds; round++) {
  for (const [name, call] of Object.entries(cases)) {
    const hit = name.endsWith('hit');
    const before = (await upstream.stats()).served;
    samples[name]!.push(await measure(call));
    if (hit) served += (await upstream.stats()).served - before;
  }
}
const row = (name: string) => `${name.padEnd(12)} ${median(samples[name]!).toFixed(0).padStart(6)} µs CPU/request`;
console.log(Object.keys(cases).map(row).join('\n'));
for (const layer of ['client', 'app']) {
  const ratio = median(samples[`${layer} hit`]!) / median(samples[`${layer} call`]!);
  console.log(`${layer}: hit/call = ${ratio.toFixed(2)}`);
}
console.log(`upstream requests during the hit runs: ${served}`);
await Promise.all([app.close(), client.close()]);
await upstream.stop();
