import type { LoadResult } from './load.ts';

/** One measured run of one server. */
export interface Row extends LoadResult {
  server: string;
  scenario: string;
  /** Upstream answer delay; NaN where no upstream is involved. */
  delayMs: number;
  connections: number;
  cpuUsPerRequest: number;
  upstreamCallsPerRequest: number;
  peakRssMB: number;
}

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

function table(header: string[], lines: string[][]): string {
  return [header, header.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function pick(rows: Row[], server: string, scenario: string, delayMs?: number): Row {
  const row = rows.find(
    (r) => r.server === server && r.scenario === scenario && (delayMs === undefined || r.delayMs === delayMs),
  );
  if (!row) throw new Error(`No ${server} row for "${scenario}" at ${delayMs} ms`);
  return row;
}

/** The measurements as a Markdown table, then each target with the ratio measured in this run. */
export function report(rows: Row[], soak: { requests: number; rssMB: number[]; liveHeapMB: number[] }): string {
  const measured = table(
    [
      'server',
      'scenario',
      'upstream delay ms',
      'conns',
      'req/s',
      'p50 ms',
      'p99 ms',
      'CPU µs/req',
      'upstream calls/req',
      'peak RSS MB',
      'failures',
    ],
    rows.map((r) => [
      r.server,
      r.scenario,
      Number.isFinite(r.delayMs) ? String(r.delayMs) : '–',
      String(r.connections),
      fixed(r.rps, 0),
      fixed(r.p50, 3),
      fixed(r.p99, 3),
      fixed(r.cpuUsPerRequest, 0),
      fixed(r.upstreamCallsPerRequest, 3),
      fixed(r.peakRssMB, 0),
      String(r.failures),
    ]),
  );
  // A partial run (--only, --soak 0) has no complete set of ratios to report.
  if (soak.liveHeapMB.length < 4) return measured;
  try {
    const facade = (scenario: string, delayMs: number) => pick(rows, 'façade', scenario, delayMs);
    const cpuRatio = facade('one field', 0).cpuUsPerRequest / pick(rows, 'Yoga floor', 'one field').cpuUsPerRequest;
    const added = (delayMs: number) =>
      facade('one field, 1 connection', delayMs).p50 - pick(rows, 'direct REST', 'one call, 1 connection', delayMs).p50;
    const calls = (scenario: string, delayMs: number) => facade(scenario, delayMs).upstreamCallsPerRequest;
    const peak = Math.max(
      ...rows.filter((r) => r.server === 'façade' && r.connections === 200).map((r) => r.peakRssMB),
      ...soak.rssMB,
    );
    const growth = soak.liveHeapMB.at(-1)! - soak.liveHeapMB[0]!;
    const check = (ok: boolean) => (ok ? 'met' : 'missed');
    const targets = table(
      ['target', 'goal', 'measured', ''],
      [
        ['one field: façade CPU/req over Yoga floor', '≤ 1.3x', `${fixed(cpuRatio, 2)}x`, check(cpuRatio <= 1.3)],
        [
          'one field, 1 connection: p50 over direct REST (0 ms upstream)',
          '< 0.3 ms',
          `${fixed(added(0), 3)} ms`,
          check(added(0) < 0.3),
        ],
        ['same, 5 ms upstream', '< 0.3 ms', `${fixed(added(5), 3)} ms`, check(added(5) < 0.3)],
        [
          '10 identical aliases: upstream calls/req (0 ms / 5 ms)',
          '= 1',
          `${fixed(calls('10 identical aliases', 0), 3)} / ${fixed(calls('10 identical aliases', 5), 3)}`,
          check(calls('10 identical aliases', 0) === 1 && calls('10 identical aliases', 5) === 1),
        ],
        [
          '200 clients, same query: upstream calls/req (5 ms upstream)',
          '< 0.2',
          fixed(calls('200 clients, same query', 5), 3),
          check(calls('200 clients, same query', 5) < 0.2),
        ],
        [
          'repeated cacheable query: upstream calls/req (0 ms / 5 ms)',
          '= 0',
          `${fixed(calls('repeated cacheable query', 0), 3)} / ${fixed(calls('repeated cacheable query', 5), 3)}`,
          check(calls('repeated cacheable query', 0) === 0 && calls('repeated cacheable query', 5) === 0),
        ],
        ['peak RSS at 200 connections', '< 200 MB', `${fixed(peak, 0)} MB`, check(peak < 200)],
        [
          `live heap after a full GC, each quarter of ${soak.requests} requests (RSS beside it)`,
          'flat',
          `${soak.liveHeapMB.map((m) => fixed(m, 0)).join(' → ')} MB (RSS ${soak.rssMB.map((m) => fixed(m, 0)).join(' → ')} MB)`,
          check(growth < 0.1 * soak.liveHeapMB[0]!),
        ],
      ],
    );
    return `${measured}\n\n${targets}`;
  } catch {
    return measured;
  }
}
