import type { LoadResult, Stats } from './load.ts';

/** One measured run of one target in one scenario and round. */
export interface Sample extends LoadResult {
  cpuUsPerRequest: number;
  upstreamCallsPerRequest: number;
  peakRssMB: number;
  memory: Stats['memory'];
}

/** Every sample of a run, by scenario, then target. */
export type Samples = Map<string, Map<string, Sample[]>>;

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const MB = (bytes: number) => fixed(bytes / 2 ** 20);

/** The median of the rounds, one field at a time. */
export function median(samples: Sample[], pick: (s: Sample) => number): number {
  const values = samples.map(pick).sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

/** A Markdown table. */
export function table(header: string[], lines: string[][]): string {
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

const cpu = (s: Sample) => s.cpuUsPerRequest;

/** Per scenario: every target's medians, its CPU against the floor's, and its worst RSS. */
function scenarioTables(samples: Samples): string {
  const header = [
    'target',
    'CPU µs/req',
    '× floor',
    'req/s',
    'p50 ms',
    'p99 ms',
    'upstream calls/req',
    'peak RSS MB',
    'failures',
  ];
  return [...samples]
    .map(([scenario, byTarget]) => {
      const floor = median(byTarget.get('floor') ?? [], cpu);
      const lines = [...byTarget].map(([target, runs]) => [
        target,
        fixed(median(runs, cpu)),
        `${fixed(median(runs, cpu) / floor, 2)}×`,
        fixed(median(runs, (s) => s.rps)),
        fixed(
          median(runs, (s) => s.p50),
          3,
        ),
        fixed(
          median(runs, (s) => s.p99),
          3,
        ),
        fixed(
          median(runs, (s) => s.upstreamCallsPerRequest),
          3,
        ),
        fixed(Math.max(...runs.map((s) => s.peakRssMB))),
        String(runs.reduce((n, s) => n + s.failures, 0)),
      ]);
      return `### ${scenario}\n\n${table(header, lines)}`;
    })
    .join('\n\n');
}

/**
 * The CPU per request each feature adds: the façade's median minus the median without it, or for a
 * plugin, the floor's median with it minus the floor's in the same process.
 */
function billOfCosts(
  byTarget: Map<string, Sample[]>,
  features: BilledFeature[],
  inProcess: Record<string, number>,
): string {
  const facade = median(byTarget.get(BASELINE)!, cpu);
  const floor = median(byTarget.get('floor')!, cpu);
  const floorBaseline = median(byTarget.get(FLOOR_BASELINE)!, cpu);
  const lines = features.map(({ feature, target, adds, plugins }) => {
    const other = median(byTarget.get(target)!, cpu);
    const cost = plugins ? other - floorBaseline : adds ? other - facade : facade - other;
    return [feature, `${target} (end to end)`, fixed(cost), `${fixed((100 * cost) / floor)} %`];
  });
  for (const [feature, us] of Object.entries(inProcess)) {
    lines.push([feature, 'timed in-process', fixed(us, 1), `${fixed((100 * us) / floor, 1)} %`]);
  }
  return table(['feature', 'measured as', 'CPU µs/req it adds', 'of the floor'], lines);
}

/** Where the façade's memory is: RSS against V8's heap, its young generation and off-heap buffers. */
function memoryLine(name: string, m: Stats['memory']): string {
  return (
    `${name}: RSS ${MB(m.rss)} MB = heap total ${MB(m.heapTotal)} MB (used ${MB(m.heapUsed)}, ` +
    `young generation ${MB(m.newSpace)}) + external ${MB(m.external)} MB (array buffers ${MB(m.arrayBuffers)}) + the rest ` +
    `(code, native heap, the binary) ${MB(m.rss - m.heapTotal - m.external)} MB`
  );
}

/** The façade the ablations are compared with: measured in their scenario only, as they are. */
export const BASELINE = 'façade, bill baseline';

/** The floor the priced plugins are compared with, in the same process as they are. */
export const FLOOR_BASELINE = 'floor, bill baseline';

/** One row of the bill: `adds` when its target has the feature on top of the baseline, `plugins` when priced on the floor. */
interface BilledFeature {
  feature: string;
  target: string;
  adds?: boolean;
  plugins?: readonly string[];
}

/** The scenario the bill of costs and the heap candidates are measured in. */
export const VARIABLES = 'distinct ids as variables';

/** Every table of a run: scenarios, added latency, bill of costs, memory (those the run has). */
export function summary(
  samples: Samples,
  costs: BilledFeature[],
  inProcess: Record<string, number>,
  idle: Map<string, number>,
): string {
  const parts = [scenarioTables(samples)];
  const rest = median(samples.get('direct REST call')!.get('upstream')!, (s) => s.p50);
  const one = samples.get('one connection');
  if (one) {
    const added = (t: string) => median(one.get(t)!, (s) => s.p50) - rest;
    const lines = [
      ['floor', added('floor')],
      ['façade', added('façade')],
      ['façade − floor', added('façade') - added('floor')],
    ];
    parts.push('### One connection: p50 added over a direct REST call');
    parts.push(
      table(
        ['target', 'p50 added ms'],
        lines.map(([t, ms]) => [String(t), fixed(Number(ms), 3)]),
      ),
    );
  }
  const variables = samples.get(VARIABLES);
  if (variables)
    parts.push(`### Bill of costs (${VARIABLES}, 50 connections)`, billOfCosts(variables, costs, inProcess));
  parts.push(
    '### Memory',
    table(
      ['target', 'idle RSS MB'],
      [...idle].map(([t, rss]) => [t, MB(rss)]),
    ),
  );
  for (const [scenario, byTarget] of samples) {
    if (!scenario.startsWith('200') && !scenario.startsWith('browsing')) continue;
    const lines = [...byTarget].map(([target, runs]) => `- ${memoryLine(target, runs.at(-1)!.memory)}`);
    parts.push(`At the end of the last "${scenario}" run:\n${lines.join('\n')}`);
  }
  return parts.join('\n\n');
}
