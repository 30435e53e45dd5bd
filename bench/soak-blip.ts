/**
 * Soak phase "blip": the upstream answers 500 to everything until GraphQL traffic has opened the
 * breaker and /readiness says 503; it stays down a while, then heals, and from then on no GraphQL
 * request is sent. /readiness is polled every 250 ms, as a kubelet would. Passes when it stayed 503
 * while the upstream was down and turned 200 within the half-open delay plus one readiness max age.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  answerNow,
  breakerState,
  distinctFields,
  failWith500,
  post,
  readiness,
  sampleEvery,
  tally,
  withStack,
} from './soak-kit.ts';

const HALF_OPEN_MS = 2_000;
const READINESS_MAX_AGE_MS = 1_000;
const POLL_MS = 250;
// Down for this long after the breaker opened: more than two half-open delays, so probes fail again.
const DOWN_MS = 5_000;
const MAX_DRIVING_REQUESTS = 60;
const RECOVERY_MAX_MS = 15_000;

/** Runs the phase, prints its figures and a pass/fail line; true when it passed. */
export async function blipPhase(): Promise<boolean> {
  const env = { PIM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS), READINESS_MAX_AGE_MS: String(READINESS_MAX_AGE_MS) };
  const run = await withStack(failWith500, env, async ({ upstream, facade }) => {
    const figures: Figures = {
      driving: 0,
      openedAfterMs: 0,
      downPolls: [] as number[],
      downCalls: 0,
      recoveryMs: -1,
      recoveryPolls: 0,
    };
    const started = Date.now();
    // GraphQL traffic until /metrics says the breaker opened (default threshold: 10 faults in a row).
    while (figures.driving < MAX_DRIVING_REQUESTS && (await breakerState(facade.url)) !== 'open') {
      await post(facade.url, distinctFields(`D${figures.driving++}`, 1), 'K');
    }
    figures.openedAfterMs = Date.now() - started;
    const opened = upstream.paths.length;
    const downUntil = Date.now() + DOWN_MS;
    await sampleEvery(
      POLL_MS,
      () => Date.now() < downUntil,
      async () => void figures.downPolls.push(await readiness(facade.url)),
    );
    const before = upstream.paths.length;
    figures.downCalls = before - opened;
    upstream.respond(answerNow);
    const healed = Date.now();
    while (Date.now() - healed < RECOVERY_MAX_MS) {
      figures.recoveryPolls++;
      if ((await readiness(facade.url)) === 200) {
        figures.recoveryMs = Date.now() - healed;
        break;
      }
      await sleep(POLL_MS);
    }
    return { figures, breakerAfter: await breakerState(facade.url), callsWhileHealed: upstream.paths.slice(before) };
  });
  return report(run.figures, run.breakerAfter, run.callsWhileHealed);
}

type Figures = {
  driving: number;
  openedAfterMs: number;
  downPolls: number[];
  downCalls: number;
  recoveryMs: number;
  recoveryPolls: number;
};

function report(figures: Figures, breakerAfter: string, callsWhileHealed: string[]): boolean {
  const limit = HALF_OPEN_MS + READINESS_MAX_AGE_MS;
  const probesOnly = callsWhileHealed.every((path) => path.includes('/readiness-probe/'));
  console.log(
    `\n## blip: upstream 500 until the breaker opens, down ${DOWN_MS} ms more, then healed with no GraphQL traffic`,
  );
  console.log(
    `PIM_BREAKER_HALF_OPEN_MS=${HALF_OPEN_MS} READINESS_MAX_AGE_MS=${READINESS_MAX_AGE_MS}, /readiness polled every ${POLL_MS} ms`,
  );
  console.log(`breaker open after ${figures.driving} GraphQL requests (${figures.openedAfterMs} ms)`);
  console.log(
    `/readiness while down: ${JSON.stringify(tally(figures.downPolls))}; upstream calls meanwhile (half-open probes): ${figures.downCalls}`,
  );
  const recovered =
    figures.recoveryMs >= 0
      ? `${figures.recoveryMs} ms (${figures.recoveryPolls} polls)`
      : `never within ${RECOVERY_MAX_MS} ms`;
  console.log(`healed -> /readiness 200: ${recovered}; breaker then ${breakerAfter}`);
  console.log(
    `upstream calls after healing: ${callsWhileHealed.length}, all readiness probes: ${probesOnly ? 'yes' : 'no'}`,
  );
  const pass =
    breakerAfter === 'closed' &&
    figures.downPolls.length > 0 &&
    figures.downPolls.every((s) => s === 503) &&
    figures.recoveryMs >= 0 &&
    figures.recoveryMs <= limit &&
    probesOnly;
  console.log(
    `blip: ${pass ? 'PASS' : 'FAIL'} (503 while down, 200 within ${limit} ms of healing with no GraphQL traffic, breaker closed)`,
  );
  return pass;
}
