/**
 * Soak phase "memory": many thousands of requests, good and hostile, against an upstream that mixes
 * in faults; samples the façade's RSS and heap (after a forced GC) and says whether memory stayed flat.
 * SOAK_REQUESTS (30,000) and SOAK_MAX_SECONDS (180) bound it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { startFacade } from './soak-kit.ts';

interface Sample {
  requests: number;
  rssMb: number;
  heapMb: number;
}

const total = Number(process.env.SOAK_REQUESTS ?? 30_000);
const maxSeconds = Number(process.env.SOAK_MAX_SECONDS ?? 180);
const concurrency = 32;
const samples = 12;

/** Every tenth upstream call misbehaves, in turn: 503, 500, reset, too slow, too big, HTML. */
function startUpstream() {
  let count = 0;
  const faults = ['503', '500', 'reset', 'slow', 'oversized', 'html'];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const n = count++;
    const fault = n % 10 === 3 ? faults[Math.floor(n / 10) % faults.length] : 'ok';
    const json = { 'content-type': 'application/json' };
    if (fault === '503' || fault === '500') return void res.writeHead(Number(fault), json).end('{}');
    if (fault === 'html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    if (fault === 'reset') return void res.writeHead(200, json).write('{"data":[', () => req.socket.resetAndDestroy());
    if (fault === 'oversized') return void res.writeHead(200, json).end(`{"pad":"${'x'.repeat(200_000)}"}`);
    const answer = () =>
      res.writeHead(200, json).end(JSON.stringify({ status: 200, data: [{ url: req.url, pad: 'y'.repeat(2_000) }] }));
    if (fault === 'slow') return void setTimeout(answer, 1_500);
    answer();
  });
  return new Promise<typeof server>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The i-th request: mostly good queries with fresh ids, some over GET, some hostile. */
function requestFor(i: number) {
  const body = (query: string) => ({
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  switch (i % 10) {
    case 0:
      return body(`{ ${Array.from({ length: 100 }, (_, a) => `a${a}: __typename`).join(' ')} }`);
    case 1:
      return {
        method: 'GET' as const,
        path: `/graphql?query=${encodeURIComponent(`{ classificationGroups(classificationId: "G${i}") }`)}`,
      };
    default:
      return body(
        `{ p: catalogProducts(catalogId: "C${i}") g: classificationGroup(classificationId: "E", classificationGroupId: "G${i}") }`,
      );
  }
}

/** The memory phase: prints its samples and whether memory stayed flat; true when it did. */
export async function memoryPhase(): Promise<boolean> {
  const upstream = await startUpstream();
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  // An upstream left listening would keep the soak from exiting.
  const facade = await startFacade(upstreamUrl, {
    PIM_TIMEOUT_MS: '1000',
    PIM_MAX_BODY_BYTES: '100000',
    PIM_CACHE: 'false',
  }).catch(async (error: unknown) => {
    await upstream.close();
    throw error;
  });
  const sample = async (requests: number): Promise<Sample> => {
    const { rss, heapUsed } = await facade.sample();
    return { requests, rssMb: round(rss / 2 ** 20), heapMb: round(heapUsed / 2 ** 20) };
  };

  const pool = new Pool(facade.url, { connections: concurrency });
  const statuses = new Map<number, number>();
  const codes = new Map<string, number>();
  const deadline = Date.now() + maxSeconds * 1_000;
  const every = Math.ceil(total / samples);
  const taken: Sample[] = [];
  let next = 0;
  let sampling = Promise.resolve();
  const worker = async () => {
    while (next < total && Date.now() < deadline) {
      const i = next++;
      const { method, path = '/graphql', ...rest } = requestFor(i) as { method: 'GET' | 'POST'; path?: string };
      const response = await pool.request({ method, path, ...rest });
      const { errors = [] } = (await response.body.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      for (const error of errors)
        codes.set(error.extensions?.code ?? '?', (codes.get(error.extensions?.code ?? '?') ?? 0) + 1);
      if ((i + 1) % every === 0) sampling = sampling.then(async () => void taken.push(await sample(i + 1)));
    }
  };
  let seconds = 0;
  try {
    taken.push(await sample(0));
    const started = Date.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    await sampling;
    seconds = (Date.now() - started) / 1_000;
    taken.push(await sample(next));
  } finally {
    await facade.stop();
    await pool.close();
    upstream.close();
  }

  console.log('\n## memory');
  console.table(taken);
  // The first samples include warm-up (JIT, pools, caches); growth is judged after it.
  const baseline = taken[Math.min(2, taken.length - 1)]!;
  const last = taken.at(-1)!;
  const heapGrowth = round(last.heapMb - baseline.heapMb);
  const rssGrowth = round(last.rssMb - baseline.rssMb);
  console.log(
    `${next} requests in ${round(seconds)} s (${Math.round(next / seconds)}/s), statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  console.log(`error codes ${JSON.stringify(Object.fromEntries(codes))}`);
  console.log(
    `heap ${baseline.heapMb} -> ${last.heapMb} MiB (${heapGrowth >= 0 ? '+' : ''}${heapGrowth}), RSS ${baseline.rssMb} -> ${last.rssMb} MiB (${rssGrowth >= 0 ? '+' : ''}${rssGrowth}) after warm-up`,
  );
  // One sample is noisy (GC timing); the trend over every sample after warm-up is the signal.
  const trend = slope(taken.slice(2)) * next;
  const flat = trend <= Math.max(5, baseline.heapMb * 0.1);
  console.log(`heap trend over the run after warm-up: ${trend >= 0 ? '+' : ''}${round(trend)} MiB`);
  console.log(flat ? 'memory flat: yes' : 'memory flat: NO (heap trend above 10% or 5 MiB after warm-up)');
  return flat;
}

/** Least-squares slope of heap MiB per request. */
function slope(points: Sample[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((sum, p) => sum + p.requests, 0) / n;
  const my = points.reduce((sum, p) => sum + p.heapMb, 0) / n;
  const sxy = points.reduce((sum, p) => sum + (p.requests - mx) * (p.heapMb - my), 0);
  const sxx = points.reduce((sum, p) => sum + (p.requests - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
