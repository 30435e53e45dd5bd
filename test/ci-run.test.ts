import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from './helpers/process.ts';

// .ci/run's own logic, with npm, apt-get and .ci/image stubbed: no install, no suite, no image.
let root: string;
let repo: string;
let bin: string;
const hidden = /^(redis-|chromium|google-chrome|varnish|apt-get$|npm$)/;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ci-run-'));
  repo = join(root, 'repo');
  bin = join(root, 'bin');
  mkdirSync(join(repo, '.ci'), { recursive: true });
  mkdirSync(bin);
  copyFileSync(join(repoRoot, '.ci/run'), join(repo, '.ci/run'));
  writeFileSync(
    join(repo, '.ci/image'),
    '#!/bin/sh\nmkdir -p artifacts\necho \'{"passed": 2, "failed": 0}\' > artifacts/image.json\n',
  );
  // A machine's programs, minus redis-server, Chromium, Varnish, apt-get and npm (stubbed per case).
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (hidden.test(name) || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  if (existsSync(join(bin, 'node'))) rmSync(join(bin, 'node'));
  symlinkSync(process.execPath, join(bin, 'node'));
  // npm: `ci` and `run` succeed; `test` writes $FAKE_REPORT (if any) where --outputFile.json says, exits $FAKE_CODE.
  writeFileSync(
    join(bin, 'npm'),
    `#!/bin/sh
case "$1" in
  test)
    for a in "$@"; do case "$a" in --outputFile.json=*) out="\${a#--outputFile.json=}";; esac; done
    [ -n "$FAKE_REPORT" ] && printf '%s' "$FAKE_REPORT" > "$out"
    exit "\${FAKE_CODE:-0}";;
  *) exit 0;;
esac
`,
  );
  for (const file of [join(repo, '.ci/run'), join(repo, '.ci/image'), join(bin, 'npm')]) chmodSync(file, 0o755);
});
afterAll(() => rm());
const rm = () => rmSync(root, { recursive: true, force: true });

function setPrograms({ installed, aptGet }: { installed: boolean; aptGet?: 'fails' | 'absent' }) {
  for (const name of ['chromium', 'redis-server', 'varnishd', 'apt-get']) rmSync(join(bin, name), { force: true });
  if (installed)
    for (const name of ['chromium', 'redis-server', 'varnishd']) writeFileSync(join(bin, name), '', { mode: 0o755 });
  if (aptGet === 'fails')
    writeFileSync(join(bin, 'apt-get'), '#!/bin/sh\necho "E: no network" >&2\nexit 100\n', { mode: 0o755 });
}

function ciRun(env: Record<string, string>) {
  const result = spawnSync(join(repo, '.ci/run'), [], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: bin, HOME: root, ...env },
  });
  const lines = result.stdout.trim().split('\n');
  return { code: result.status, last: lines.at(-1), output: `${result.stdout}\n${result.stderr}` };
}

const report = (over: object) =>
  JSON.stringify({
    numPassedTests: 5,
    numFailedTests: 0,
    numPendingTests: 0,
    numTodoTests: 0,
    numFailedTestSuites: 0,
    testResults: [{ name: 'ok.test.ts', status: 'passed', assertionResults: Array(5).fill({ status: 'passed' }) }],
    ...over,
  });

it('ends a clean run with the counts and exit code 0', () => {
  setPrograms({ installed: true });
  rmSync(join(repo, 'artifacts'), { recursive: true, force: true });
  const run = ciRun({ FAKE_REPORT: report({}) });
  expect(run.last, run.output).toBe('7 passed, 0 failed');
  expect(run.code).toBe(0);
});

it('counts a file that failed to load and a failed beforeAll as failures, not "0 failed"', () => {
  setPrograms({ installed: true });
  // What vitest 4 writes for one passing file, one whose import throws, one whose beforeAll throws
  // (as every Redis file's does under REQUIRE_ALL_TOOLS=1 when redis-server is missing).
  const failedRun = report({
    numPassedTests: 1,
    numFailedTests: 0,
    numPendingTests: 2,
    numFailedTestSuites: 2,
    testResults: [
      { name: 'a-import.test.ts', status: 'failed', message: 'Cannot find module', assertionResults: [] },
      {
        name: 'b-hook.test.ts',
        status: 'failed',
        message: 'redis-server not found',
        assertionResults: [{ status: 'skipped' }, { status: 'skipped' }],
      },
      { name: 'c-ok.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }] },
    ],
  });
  const run = ciRun({ FAKE_REPORT: failedRun, FAKE_CODE: '1' });
  expect(run.code).not.toBe(0);
  expect(run.last, run.output).toMatch(/^\d+ passed, \d+ failed$/);
  expect(run.last, run.output).not.toMatch(/ 0 failed$/);
});

it("does not repeat a previous run's counts when vitest crashes before writing its report", () => {
  setPrograms({ installed: true });
  ciRun({ FAKE_REPORT: report({}) }); // leaves artifacts/vitest.json behind, as a rerun in a kept workspace finds it
  const run = ciRun({ FAKE_REPORT: '', FAKE_CODE: '1' });
  expect(run.code).not.toBe(0);
  expect(run.last, run.output).toBe('2 passed, 1 failed');
});

it.each(['fails', 'absent'] as const)('still ends with the counts line when apt-get %s', (aptGet) => {
  setPrograms({ installed: false, aptGet });
  const run = ciRun({ FAKE_REPORT: report({}) });
  expect(run.code).not.toBe(0);
  expect(run.last, run.output).toMatch(/^\d+ passed, \d+ failed$/);
});

it('still fails a run in which a check was skipped, saying so', () => {
  setPrograms({ installed: true });
  const skipped = report({
    numPassedTests: 1,
    numPendingTests: 1,
    testResults: [
      { name: 'ipv6.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }, { status: 'skipped' }] },
    ],
  });
  const run = ciRun({ FAKE_REPORT: skipped });
  expect(run.code).not.toBe(0);
  expect(run.output).toContain('1 checks skipped');
  expect(run.last, run.output).toBe('3 passed, 0 failed');
});
