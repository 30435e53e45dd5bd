/**
 * `npm run bench [-- --quick] [-- --rounds 3 --duration 3 --warmup 1 --heap-flags '…']`: starts a
 * loopback upstream, an OTLP collector stub, the floor, the façade and its ablations in child
 * processes, runs every scenario against every target interleaved over the rounds, and prints
 * medians, ratios against the floor, the bill of costs and memory; JSON goes to bench/results/.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { imageEnv } from '../deploy/image/env.ts';
import { load, startServer, type LoadOptions, type ServerProcess } from './load.ts';
import { measureInProcess } from './micro.ts';
import { BASELINE, FLOOR_BASELINE, summary, VARIABLES, type Sample, type Samples } from './report.ts';
import { bill, freshId, scenarios, withVariables, zipfId, type Target } from './scenarios.ts';

// The image's heap flags and malloc (read from the Dockerfile), the first capped façade by default.
const image = imageEnv(readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8'));
const imageFlags = [
  image.NODE_OPTIONS,
  ...['LD_PRELOAD', 'MALLOC_CONF'].filter((name) => image[name] !== undefined).map((name) => `${name}=${image[name]}`),
];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    // Node flags of the capped façade; several candidates separated by ';' run side by side.
    'heap-flags': {
      type: 'string',
      default: `${imageFlags.join(' ')};--max-semi-space-size=32 --max-old-space-size=256 MALLOC_ARENA_MAX=2`,
    },
    // Scenarios whose name contains one of these ';'-separated parts; the rest are skipped.
    only: { type: 'string', default: '' },
    // The browsing mix's share of requests that reach the PIM, measured on the façade over this many seconds at
    // 200 connections (0: skipped). Its answers live 60 s and expire together, once a minute: a round of a few
    // seconds holds that wave or not, so only a window of whole minutes measures the share.
    'share-seconds': { type: 'string', default: '120' },
  },
});
const rounds = values.quick ? 2 : Number(values.rounds);
const duration = values.quick ? 1 : Number(values.duration);
const warmup = values.quick ? 0.5 : Number(values.warmup);
const heapFlags = values['heap-flags'].split(';').map((flags) => flags.split(' ').filter(Boolean));

const capped = heapFlags.map((flags) => `façade, ${flags.join(' ')}`);

async function measure(server: ServerProcess, upstream: ServerProcess, options: LoadOptions): Promise<Sample> {
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
    memory: after.memory,
  };
}

const post = (server: ServerProcess, body: () => string, connections: number): LoadOptions => ({
  url: `${server.url}/graphql`,
  method: 'POST',
  body,
  headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
  connections,
});

const upstream = await startServer('upstream');
const collector = await startServer('collector');
const targets: Target[] = [
  { name: 'floor', kind: 'floor' },
  { name: 'façade', kind: 'facade' },
  // The bill's baseline: the same façade again, in the ablations' process and scenario only.
  { name: BASELINE, kind: 'facade' },
  {
    name: 'façade + tracing (OTLP to a local stub)',
    kind: 'facade',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
  },
  // The floor the plugin rows of the bill are priced against, in their process.
  { name: FLOOR_BASELINE, kind: 'floor' },
  ...bill.map(({ target, env, plugins }): Target => ({
    name: target,
    kind: plugins ? 'floor' : 'facade',
    env,
    plugins,
  })),
  ...heapFlags.map((flags, i): Target => ({ name: capped[i]!, kind: 'facade', flags })),
];
const servers = new Map<string, ServerProcess>();
// The bill's façades (baseline, tracing, ablations) share one process, so one heap and one JIT
// state: as separate processes, two identical façades differed by 28 %. Every other target has its own.
const variants = targets.filter(
  (t) => t === targets[2] || t === targets[3] || t.name === FLOOR_BASELINE || bill.some((b) => b.target === t.name),
);
try {
  const shared = await startServer('variants', { upstreamUrl: upstream.url, variants });
  variants.forEach(({ name }, i) => servers.set(name, shared.part(i)));
  for (const { name, kind, env, flags } of targets) {
    if (servers.has(name)) continue;
    servers.set(name, await startServer(kind, { upstreamUrl: upstream.url, env }, flags));
  }
  await sleep(2_000);
  const idle = new Map<string, number>();
  for (const name of ['floor', 'façade', ...capped]) idle.set(name, (await servers.get(name)!.stats()).rss);
  // Every target gets the same warm-up first, at 200 connections: V8 grows the young generation
  // with the allocation rate it has seen, and a smaller one costs CPU, so a target measured in one
  // scenario only must not start with a smaller heap than the façade, which runs them all.
  for (const server of servers.values()) {
    const body = () => withVariables(freshId(), 10);
    await load({ ...post(server, body, 200), duration: 4 * warmup }, false);
  }

  const only = values.only.split(';').filter(Boolean);
  const plan = scenarios([BASELINE, targets[3]!.name, FLOOR_BASELINE, ...bill.map((b) => b.target)], capped).filter(
    (s) => only.length === 0 || only.some((part) => s.name.includes(part)),
  );
  // The browsing mix is measured in its steady state: a cold cache asks the PIM for about a tenth of the
  // first few thousand requests, until the Zipf tail has been seen once (30,000 requests see nearly all of it).
  const browsing = new Set(plan.filter((s) => s.name.startsWith('browsing')).flatMap((s) => s.targets));
  for (const name of browsing) {
    await load({ ...post(servers.get(name)!, () => withVariables(zipfId(), 10), 200), amount: 30_000 }, false);
  }
  const samples: Samples = new Map([['direct REST call', new Map([['upstream', []]])]]);
  for (const { name, targets: names } of plan) samples.set(name, new Map(names.map((t) => [t, []])));
  for (let round = 0; round < rounds; round++) {
    console.error(`round ${round + 1} of ${rounds}`);
    const rest = {
      url: upstream.url,
      connections: 1,
      path: () => `/pxm/pimapi/v1/catalogs/${freshId()}/products/search?languageId=en&pageSize=10`,
    };
    samples
      .get('direct REST call')!
      .get('upstream')!
      .push(await measure(upstream, upstream, rest));
    for (const { name, connections, body, targets: names } of plan) {
      // Every other round runs the targets in reverse, so none always follows the same neighbour.
      for (const target of round % 2 ? [...names].reverse() : names) {
        const options = {
          url: `${servers.get(target)!.url}/graphql`,
          method: 'POST' as const,
          body,
          headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
          connections,
        };
        samples
          .get(name)!
          .get(target)!
          .push(await measure(servers.get(target)!, upstream, options));
      }
    }
  }
  const share = plan.some((s) => s.name.startsWith('browsing mix at 200')) ? await pimShare() : undefined;
  const inProcess = samples.has(VARIABLES) ? await measureInProcess(values.quick ? 20_000 : 100_000) : {};
  const costs = [...bill, { feature: 'tracing, exporter set', target: targets[3]!.name, adds: true }];
  const output = [
    `Node ${process.version}, ${rounds} rounds of ${duration} s (after ${warmup} s warm-up) per target and scenario; medians.`,
    summary(samples, costs, inProcess, idle),
    ...(share ? [share.line] : []),
  ].join('\n\n');
  console.log(output);
  const at = new Date().toISOString().replace(/[:.]/g, '-');
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  const json = {
    at,
    rounds,
    duration,
    heapFlags,
    samples: Object.fromEntries([...samples].map(([s, m]) => [s, Object.fromEntries(m)])),
    inProcess,
    pimShare: share?.figures,
  };
  await writeFile(new URL(`./results/bench-${at}.json`, import.meta.url), JSON.stringify(json, null, 2));
  await writeFile(new URL(`./results/bench-${at}.md`, import.meta.url), output);
} finally {
  await Promise.all([upstream, collector, ...servers.values()].map((s) => s.stop()));
}

/** The browsing mix on the façade for `--share-seconds`, at 200 connections: PIM calls per request served. */
async function pimShare() {
  const seconds = Number(values['share-seconds']);
  if (!(seconds > 0)) return undefined;
  console.error(`PIM share: ${seconds} s of the browsing mix`);
  const facade = servers.get('façade')!;
  const [before, upBefore] = [await facade.stats(), await upstream.stats()];
  await load({ ...post(facade, () => withVariables(zipfId(), 10), 200), duration: seconds }, false);
  const [after, upAfter] = [await facade.stats(), await upstream.stats()];
  const figures = { seconds, served: after.served - before.served, pimCalls: upAfter.served - upBefore.served };
  const percent = ((100 * figures.pimCalls) / figures.served).toFixed(2);
  const line = `Browsing mix at 200 connections, façade, over ${seconds} s: ${figures.pimCalls} PIM calls for ${figures.served} requests, ${percent} % reach the PIM.`;
  return { line, figures };
}
