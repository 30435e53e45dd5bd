/**
 * Soak phase "burst": one credential floods the upstream connections while another keeps asking.
 * Key A sends 10 concurrent requests of 15 distinct fields each, and the upstream takes 3 s over
 * each of A's calls; key B sends a request of 3 fields every 250 ms, answered at once upstream.
 * Passes when every B answer arrives within 2 s without errors, and the breaker (from /metrics)
 * stays closed and /readiness 200 in every sample.
 */
import {
  answerAfter,
  answerNow,
  breakerState,
  distinctFields,
  median,
  post,
  readiness,
  sampleEvery,
  tally,
  withStack,
  type Handler,
} from './soak-kit.ts';

const A_REQUESTS = 10;
const A_FIELDS = 15;
const A_UPSTREAM_MS = 3_000;
/** A's calls take A_UPSTREAM_MS, everyone else's answer at once. */
const slowForA: Handler = (req, res) =>
  req.headers['x-api-key'] === 'A' ? answerAfter(A_UPSTREAM_MS)(req, res) : answerNow(req, res);

const B_EVERY_MS = 250;
const B_LIMIT_MS = 2_000;
// Past A's 20 s budget (GRAPHQL_BUDGET_MS default) with room to spare; bounds the B and sample loops.
const PHASE_MAX_MS = 35_000;
// Readiness probes the upstream at most this often, so the samples see it re-checked during the burst.
const READINESS_MAX_AGE_MS = 1_000;

/** Runs the phase, prints its figures and a pass/fail line; true when it passed. */
export async function burstPhase(): Promise<boolean> {
  const env = { READINESS_MAX_AGE_MS: String(READINESS_MAX_AGE_MS) };
  const b: Array<{ ms: number; codes: string[] }> = [];
  const breaker: string[] = [];
  const ready: number[] = [];
  const started = Date.now();
  let aCodes: string[][] = [];
  await withStack(slowForA, env, async ({ facade }) => {
    const stopAll = new AbortController();
    try {
      const a = Array.from({ length: A_REQUESTS }, (_, r) =>
        post(
          facade.url,
          distinctFields(`A${r}`, A_FIELDS),
          'A',
          AbortSignal.any([stopAll.signal, AbortSignal.timeout(PHASE_MAX_MS)]),
        ),
      );
      let aDone = false;
      const aSettled = Promise.allSettled(a).then((results) => {
        aDone = true;
        aCodes = results.map((r) => (r.status === 'fulfilled' ? r.value : [`client: ${String(r.reason)}`]));
      });
      const sampler = (sample: () => Promise<void>) =>
        sampleEvery(B_EVERY_MS, () => !aDone && Date.now() - started < PHASE_MAX_MS, sample);
      const askB = async (n: number) => {
        const sent = Date.now();
        const codes = await post(facade.url, distinctFields(`B${n}`, 3), 'B', AbortSignal.timeout(10_000)).catch(
          (error: Error) => [`client: ${error.name}`],
        );
        b.push({ ms: Date.now() - sent, codes });
      };
      const bCalls: Array<Promise<void>> = [];
      await Promise.all([
        sampler(async () => void ready.push(await readiness(facade.url))),
        sampler(async () => void breaker.push(await breakerState(facade.url))),
        // B does not wait for its previous answer: it is another client, not a queue behind A.
        sampler(async () => void bCalls.push(askB(bCalls.length))),
      ]);
      await Promise.all([aSettled, ...bCalls]);
      breaker.push(await breakerState(facade.url));
      ready.push(await readiness(facade.url));
    } finally {
      stopAll.abort();
    }
  });
  return report({ b, breaker, ready, aCodes, seconds: (Date.now() - started) / 1_000 });
}

function report(run: {
  b: Array<{ ms: number; codes: string[] }>;
  breaker: string[];
  ready: number[];
  aCodes: string[][];
  seconds: number;
}): boolean {
  const { b, breaker, ready, aCodes, seconds } = run;
  const latencies = b.map((r) => r.ms);
  const bFailed = b.filter((r) => r.codes.length > 0);
  const maxMs = Math.max(0, ...latencies);
  console.log(
    `\n## burst: key A ${A_REQUESTS} x ${A_FIELDS} fields (upstream ${A_UPSTREAM_MS} ms per call), key B every ${B_EVERY_MS} ms`,
  );
  console.log(
    `phase ${seconds.toFixed(1)} s; A's requests' error codes: ${JSON.stringify(tally(aCodes.flat()))} (${aCodes.filter((c) => c.length === 0).length} of ${aCodes.length} without errors)`,
  );
  console.log(
    `B: ${b.length} requests, latency median ${median(latencies)} ms, max ${maxMs} ms, failed ${bFailed.length}${bFailed.length ? ` ${JSON.stringify(tally(bFailed.flatMap((r) => r.codes)))}` : ''}`,
  );
  console.log(`breaker samples ${JSON.stringify(tally(breaker))}; /readiness samples ${JSON.stringify(tally(ready))}`);
  const pass =
    b.length > 0 &&
    bFailed.length === 0 &&
    maxMs < B_LIMIT_MS &&
    breaker.every((s) => s === 'closed') &&
    ready.every((s) => s === 200);
  console.log(
    `burst: ${pass ? 'PASS' : 'FAIL'} (B within ${B_LIMIT_MS} ms and no failures, breaker closed, /readiness 200 throughout)`,
  );
  return pass;
}
