import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageCommand } from '../deploy/image/env.ts';
import { repoRoot, runProcess, startProcess, type TestProcess } from './helpers/process.ts';

// A real `npm ci` against the registry (through npm's cache): about a minute on a loaded machine.
const installTimeoutMs = 240_000;
let dir: string;
let install: { code: number | null; lines: string[] };
let build: { code: number | null; lines: string[] };

/** Copies the files git would ship (tracked, or new and not ignored) into `to`: no node_modules. */
async function copyRepository(to: string): Promise<void> {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  for (const file of listed.split('\0').filter(Boolean)) {
    // A tracked file deleted in the working tree is not shipped either.
    if (!existsSync(join(repoRoot, file))) continue;
    await mkdir(dirname(join(to, file)), { recursive: true });
    await copyFile(join(repoRoot, file), join(to, file));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'facade-production-'));
  await copyRepository(dir);
  install = await runProcess('npm', ['ci', '--omit=dev', '--ignore-scripts=false', '--no-audit', '--no-fund'], {
    cwd: dir,
  });
  // The image's build stage: `npm run build` with TypeScript alone (here the repository's), no other dev dependency.
  build = await runProcess('npm', ['run', 'build'], {
    cwd: dir,
    env: { PATH: `${join(repoRoot, 'node_modules', '.bin')}${delimiter}${process.env.PATH}` },
  });
}, installTimeoutMs);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('a production install (npm ci --omit=dev)', () => {
  it('installs, without the development tooling', () => {
    expect(install.code, install.lines.join('\n')).toBe(0);
    for (const devOnly of ['tsx', 'esbuild', 'typescript', 'vitest', 'node']) {
      expect(existsSync(join(dir, 'node_modules', devOnly)), devOnly).toBe(false);
    }
  });

  it('starts as the image starts it, answers the demo, and exits 0 on SIGTERM', async () => {
    expect(build.code, build.lines.join('\n')).toBe(0);
    // The image's command (`node dist/main.js`) with its own Node 24: here, the one running this test.
    const [node, ...args] = imageCommand(await readFile(join(dir, 'Dockerfile'), 'utf8'));
    expect(node).toBe('node');
    const server: TestProcess = startProcess(process.execPath, args, {
      cwd: dir,
      env: { NODE_ENV: 'production', PIM_DEMO: 'true', PORT: '0', HOST: '127.0.0.1', PIM_BASE_URL: '' },
    });
    try {
      const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: '{ classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "MC-050000") }',
        }),
      });
      const body = await response.json();
      expect(body.errors).toBeUndefined();
      expect(body.data.classificationGroup).toMatchObject({
        status: 200,
        data: [{ classificationGroupId: 'MC-050000', classificationId: 'ECLASS-DEMO' }],
      });

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(server.lines.filter((line) => line.includes('SIGTERM received, shutting down'))).toHaveLength(1);
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      server.kill();
    }
  });
});
