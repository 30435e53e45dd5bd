import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestTagDefinition } from 'vitest/config';

declare module 'vitest' {
  interface TaskMeta {
    /** Why a check was skipped: what to install to run it. */
    missing?: string;
  }
}

/**
 * The programs some checks drive for real, none of them from npm: the names they go by on PATH,
 * an environment variable that may name the executable instead, and how to get them.
 */
export const programs = {
  chromium: {
    names: ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'],
    env: 'CHROMIUM_PATH',
    install: 'apt-get install chromium, or set CHROMIUM_PATH',
  },
  'redis-server': { names: ['redis-server'], env: 'REDIS_SERVER_PATH', install: 'apt-get install redis-server' },
  varnishd: { names: ['varnishd'], env: 'VARNISHD_PATH', install: 'apt-get install varnish' },
} as const;

export type Program = keyof typeof programs;

/**
 * The executable for `program`: the one its environment variable names, else the first of its
 * names found on PATH; undefined when there is none.
 */
export function findProgram(program: Program, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { names, env: variable } = programs[program];
  if (env[variable]) return isExecutable(env[variable]) ? env[variable] : undefined;
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.flatMap((dir) => names.map((name) => join(dir, name))).find(isExecutable);
}

/** The line a skipped check shows: what it needs and how to get it. */
export function installHint(program: Program): string {
  return `install ${program} (${programs[program].install})`;
}

/**
 * The executable for `program`, or an error naming what to install: for the helpers that start it,
 * so a run that insists on every check (REQUIRE_ALL_TOOLS=1) fails with the same hint a skip shows.
 */
export function requireProgram(program: Program): string {
  const found = findProgram(program);
  if (!found) throw new Error(`${program} not found: ${installHint(program)}`);
  return found;
}

/**
 * One vitest tag per program (`// @module-tag redis-server` on a file, or `{ tags: [...] }` on a
 * suite): where the program is missing its checks are skipped with the install hint as their
 * `missing` meta, which the summary reporter counts. REQUIRE_ALL_TOOLS=1 (CI) runs them anyway,
 * so they fail instead of hiding.
 */
export function programTags(env: NodeJS.ProcessEnv = process.env): TestTagDefinition[] {
  return (Object.keys(programs) as Program[]).map((program) => {
    const skip = !findProgram(program, env) && env.REQUIRE_ALL_TOOLS !== '1';
    return {
      name: program,
      description: `needs ${program}`,
      ...(skip && { skip, meta: { missing: installHint(program) } }),
    };
  });
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
