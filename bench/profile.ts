/**
 * `npm run bench:profile [-- --target facade|floor --seconds 10 --top 25 --mix distinct|browsing --connections 50]`: runs
 * one target under `node --cpu-prof` with the "distinct ids as variables" load (or the browsing mix) at 50 connections (or --connections), then prints the
 * functions with the most self time (the profile itself stays in bench/results/ for a viewer).
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { load, startServer } from './load.ts';
import { freshId, withVariables, zipfId } from './scenarios.ts';

interface ProfileNode {
  id: number;
  hitCount: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'facade' },
    seconds: { type: 'string', default: '10' },
    top: { type: 'string', default: '25' },
    env: { type: 'string', default: '{}' },
    mix: { type: 'string', default: 'distinct' },
    connections: { type: 'string', default: '50' },
  },
});
const dir = new URL(`./results/profile-${Date.now()}/`, import.meta.url);
await mkdir(dir, { recursive: true });
const upstream = await startServer('upstream');
const env = JSON.parse(values.env) as Record<string, string>;
const target = await startServer(values.target, { upstreamUrl: upstream.url, env }, [
  '--cpu-prof',
  `--cpu-prof-dir=${dir.pathname}`,
]);
try {
  const options = {
    url: `${target.url}/graphql`,
    method: 'POST' as const,
    body: () => withVariables(values.mix === 'browsing' ? zipfId() : freshId(), 10),
    headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
    connections: Number(values.connections),
  };
  await load({ ...options, duration: 3 }, false);
  const result = await load({ ...options, duration: Number(values.seconds) });
  console.log(`${result.requests} requests, ${result.failures} failures`);
} finally {
  await Promise.all([target.stop(), upstream.stop()]);
}

const file = (await readdir(dir)).find((name) => name.endsWith('.cpuprofile'))!;
const { nodes } = JSON.parse(await readFile(new URL(file, dir), 'utf8')) as { nodes: ProfileNode[] };
const total = nodes.reduce((sum, n) => sum + n.hitCount, 0);
const self = new Map<string, number>();
for (const { hitCount, callFrame: f } of nodes) {
  const where = f.url
    ? `${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/src\//, 'src/')}:${f.lineNumber + 1}`
    : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + hitCount);
}
console.log(`| self % | function |\n| --- | --- |`);
for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`| ${((100 * hits) / total).toFixed(1)} | ${key} |`);
}
// The same self time by package (or by our own file), which is where a fix would go.
const byPackage = new Map<string, number>();
for (const { hitCount, callFrame: f } of nodes) {
  // undici's cache interceptor and store are the HTTP cache, not the HTTP client: counted apart.
  const cache = /undici\/lib\/(?:interceptor\/cache|cache|util\/cache|handler\/cache)/.test(f.url)
    ? 'undici (HTTP cache)'
    : undefined;
  const pkg =
    cache ??
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url)?.[1] ??
    /\/(src\/.*)$/.exec(f.url)?.[1] ??
    (f.url.startsWith('node:') ? 'node' : f.url || f.functionName);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hitCount);
}
console.log(`\n| self % | package or file |\n| --- | --- |`);
for (const [pkg, hits] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`| ${((100 * hits) / total).toFixed(1)} | ${pkg} |`);
}
console.log(`\nProfile: bench/results/${dir.pathname.split('/').at(-2)}/${file}`);
