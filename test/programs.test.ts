import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runProcess } from './helpers/process.ts';
import { findProgram, programTags } from './helpers/programs.ts';

const vitest = join(createRequire(import.meta.url).resolve('vitest/package.json'), '../vitest.mjs');
// A file whose only check needs redis-server: quick to skip, and quick to fail.
const redisFile = 'test/ecosystem/persisted-redis-bound.test.ts';

let bare: string;
beforeAll(async () => {
  // A PATH with nothing on it: a machine with Node and npm and none of the programs.
  bare = await mkdtemp(join(tmpdir(), 'bare-path-'));
});
afterAll(() => rm(bare, { recursive: true, force: true }));

describe('a machine without redis-server, varnishd or Chromium', () => {
  it('passes `vitest run`, saying how many checks it skipped and what to install', async () => {
    // REQUIRE_ALL_TOOLS is cleared: .ci/run sets it for the suite, and the child would inherit it.
    const env = { PATH: bare, REQUIRE_ALL_TOOLS: '' };
    const { code, lines } = await runProcess(process.execPath, [vitest, 'run', redisFile], { env });
    expect(code, lines.join('\n')).toBe(0);
    expect(lines).toContain('skipped 1 check: install redis-server (apt-get install redis-server) for 1');
  });

  it('fails instead under REQUIRE_ALL_TOOLS=1 (CI), naming what to install', async () => {
    const { code, lines } = await runProcess(process.execPath, [vitest, 'run', redisFile], {
      env: { PATH: bare, REQUIRE_ALL_TOOLS: '1' },
    });
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain('redis-server not found: install redis-server (apt-get install redis-server)');
    expect(lines.join('\n')).not.toMatch(/skipped \d+ check/);
  });
});

describe('finding a program', () => {
  it('takes the first name found on PATH, or the executable its variable names', async () => {
    const fake = join(bare, 'chromium-browser');
    await writeFile(fake, '#!/bin/sh\n');
    await chmod(fake, 0o755);
    expect(findProgram('chromium', { PATH: bare })).toBe(fake);
    expect(findProgram('chromium', { PATH: '', CHROMIUM_PATH: fake })).toBe(fake);
    expect(findProgram('chromium', { PATH: '', CHROMIUM_PATH: join(bare, 'absent') })).toBeUndefined();
    expect(findProgram('varnishd', { PATH: bare })).toBeUndefined();
  });

  it('tags the checks of a missing program as skipped with its hint, unless REQUIRE_ALL_TOOLS=1', () => {
    const varnish = (env: NodeJS.ProcessEnv) => programTags(env).find((tag) => tag.name === 'varnishd');
    expect(varnish({ PATH: bare })).toMatchObject({
      skip: true,
      meta: { missing: 'install varnishd (apt-get install varnish)' },
    });
    expect(varnish({ PATH: bare, REQUIRE_ALL_TOOLS: '1' })).not.toHaveProperty('skip');
  });
});

describe('the tags', () => {
  // What starts each program; a file that starts one without its tag fails where the program is missing.
  const starters = {
    chromium: ['chromium.launch('],
    'redis-server': ['startRedis(', 'useRedisFleet('],
    varnishd: ['startVarnish('],
  };
  const files = readdirSync(join(repoRoot, 'test'), { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.test.ts') && file !== 'programs.test.ts',
  );
  it.each(Object.entries(starters))('every test file that starts %s carries its tag', (program, calls) => {
    const untagged = files.filter((file) => {
      const text = readFileSync(join(repoRoot, 'test', file), 'utf8');
      const starts = calls.some((call) => text.includes(call));
      return starts && !text.includes(`@module-tag ${program}`) && !text.includes(`tags: ['${program}']`);
    });
    expect(untagged).toEqual([]);
  });
});
