/**
 * `npm run bench:ab -- [--base DIR|floor] [--env '{"NAME":"value"}'] [--rounds 8] [--connections 200] [--mix distinct|browsing|refused]`
 *
 * CPU per request of two façades in ONE process, interleaved: A is the checkout at `--base` (with its
 * own node_modules), the plain-Yoga floor (`--base floor`), or this one; B is this checkout with
 * `--env` added to its settings. Two processes
 * of the same façade differ by 10-30 % on a shared machine, one process by about 5 %: this is the
 * way to tell whether a change, or a setting, saves a few percent. Prints each side's median over
 * the rounds and B/A, for the whole process and for the main thread alone (the difference is V8's
 * GC helper threads and libuv's pool).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { openSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { load, startServer } from './load.ts';
import { freshId, pastCallsCap, withVariables, zipfId } from './scenarios.ts';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: '' },
    env: { type: 'string', default: '{}' },
    rounds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '200' },
    mix: { type: 'string', default: 'distinct' },
  },
});
const mixes: Record<string, () => string> = {
  distinct: () => withVariables(freshId(), 10),
  browsing: () => withVariables(zipfId(), 10),
  // Not for the floor, which has no entities.
  refused: pastCallsCap,
};
const upstream = await startServer('upstream');
const base = values.base === 'floor' ? 'floor' : values.base && resolve(values.base);
// No loader flags: the façades run on Node's type stripping, as `npm start` runs them.
const child = fork(new URL('./ab-server.ts', import.meta.url).pathname, [upstream.url, base, values.env], {
  execArgv: [],
  stdio: ['ignore', openSync('/dev/null', 'w'), 'inherit', 'ipc'],
});
try {
  const [{ urls }] = (await once(child, 'message')) as [{ urls: string[] }];
  const stats = async () => {
    child.send('stats');
    return ((await once(child, 'message')) as [{ served: number[]; cpu: NodeJS.CpuUsage; main: NodeJS.CpuUsage }])[0];
  };
  const options = (url: string) => ({
    url: `${url}/graphql`,
    method: 'POST' as const,
    body: mixes[values.mix] ?? mixes['distinct']!,
    headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
    connections: Number(values.connections),
  });
  for (const url of urls) await load({ ...options(url), duration: 3 }, false);
  const cpu: number[][] = [[], []];
  const main: number[][] = [[], []];
  const usedBy = (before: NodeJS.CpuUsage, after: NodeJS.CpuUsage) =>
    after.user + after.system - before.user - before.system;
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const side of round % 2 ? [1, 0] : [0, 1]) {
      await load({ ...options(urls[side]!), duration: 0.5 }, false);
      const before = await stats();
      await load({ ...options(urls[side]!), duration: 2 }, false);
      const after = await stats();
      const served = after.served[side]! - before.served[side]!;
      cpu[side]!.push(usedBy(before.cpu, after.cpu) / served);
      main[side]!.push(usedBy(before.main, after.main) / served);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [a, b] = cpu.map(median) as [number, number];
  const [mainA, mainB] = main.map(median) as [number, number];
  const line = (side: number, a: number, mainA: number) =>
    `${a.toFixed(0)} µs/request (main thread ${mainA.toFixed(0)}); rounds ${cpu[side]!.map(Math.round).join(' ')}`;
  console.log(`A (${base || 'this checkout'}): ${line(0, a, mainA)}`);
  console.log(`B (this checkout, ${values.env}): ${line(1, b, mainB)}`);
  console.log(`B/A ${(b / a).toFixed(2)} (main thread ${(mainB / mainA).toFixed(2)})`);
} finally {
  child.kill();
  await upstream.stop();
}
