import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** The repository root, where `npm start` and `node src/main.ts` run. */
export const repoRoot = new URL('../..', import.meta.url).pathname;

/**
 * The environment of `node src/main.ts` as production runs it, on the demo catalog, at 127.0.0.1 on a free port,
 * logging `info`, with a one-second grace: for tests that spawn it with stdio of their own (a stdout that goes away).
 */
export const productionDemoEnv = (): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  NODE_ENV: 'production',
  PORT: '0',
  HOST: '127.0.0.1',
  PIM_DEMO: 'true',
  LOG_LEVEL: 'info',
  SHUTDOWN_GRACE_MS: '1000',
});

/** A process started by a test, in a process group of its own so nothing it starts outlives the test. */
export interface TestProcess {
  child: ChildProcess;
  /** Every stdout and stderr line so far. */
  lines: string[];
  /** The stderr lines alone. */
  stderr: string[];
  /** The exit code (null when a signal ended it), once all output is read. */
  exited: Promise<number | null>;
  /** Resolves with the first group of the first line matching `pattern`; rejects if the process exits first. */
  waitFor(pattern: RegExp): Promise<string>;
  /** SIGKILLs the whole process group if anything of it still runs; safe to call any time. */
  kill(): void;
}

/**
 * Spawns `command` with the given environment added to this one, minus npm's own `npm_*`
 * variables: under `npm test` they point npm at this repository, whatever `cwd` says.
 */
export function startProcess(
  command: string,
  args: string[],
  { cwd = repoRoot, env = {} }: { cwd?: string; env?: Record<string, string> } = {},
): TestProcess {
  const inherited = Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_'));
  const child = spawn(command, args, {
    cwd,
    env: { ...Object.fromEntries(inherited), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const watchers = new Set<() => void>();
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (stream === child.stderr) stderr.push(line);
      for (const watcher of watchers) watcher();
    });
  }
  // 'close' comes once the process has exited and its output is read to the end.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return {
    child,
    lines,
    stderr,
    exited,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = lines.map((line) => pattern.exec(line)).find(Boolean);
          if (match) (watchers.delete(check), resolve(match[1] ?? match[0]));
        };
        watchers.add(check);
        check();
        void exited.then((code) => reject(new Error(`exited with ${code}:\n${lines.join('\n')}`)));
      }),
    kill: () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    },
  };
}

/** Runs a command to its end and returns its exit code, output lines and stderr lines. */
export async function runProcess(command: string, args: string[], options?: Parameters<typeof startProcess>[2]) {
  const started = startProcess(command, args, options);
  try {
    return { code: await started.exited, lines: started.lines, stderr: started.stderr };
  } finally {
    started.kill();
  }
}

/** True while a process with this id exists. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
