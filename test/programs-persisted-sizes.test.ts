import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

// docs/integration.md: "Sizes, measured with `npm run bench:persisted-sizes` (demo catalog, loopback)". The script
// measures every operation of examples/gql/persisted-documents.json; it starts and stops its own loopback servers.
it('`npm run bench:persisted-sizes` measures every operation of the manifest and exits 0', async () => {
  const manifest = JSON.parse(readFileSync(`${root}examples/gql/persisted-documents.json`, 'utf8')) as Record<
    string,
    string
  >;
  const names = Object.values(manifest).map((document) => /query (\w+)/.exec(document)![1]!);
  const run = await promisify(execFile)(process.execPath, ['bench/persisted-sizes.ts'], { cwd: root }).then(
    (out) => ({ code: 0, stdout: out.stdout, stderr: out.stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  expect(run.stderr.split('\n')[0] ?? '').toBe('');
  expect(run.code).toBe(0);
  for (const name of names)
    expect(run.stdout).toMatch(new RegExp(`^\\| ${name} \\| \\d+ \\| \\d+ \\| \\d+ \\| \\d+`, 'm'));
}, 60_000);
