/**
 * The environment a Dockerfile's last stage sets with `ENV NAME=value ...` (continuation lines
 * joined, quotes dropped): what the image runs with, read by the deploy tests and `npm run bench:rss`.
 */
export function imageEnv(dockerfile: string): Record<string, string> {
  const stage = lastStage(dockerfile);
  const env: Record<string, string> = {};
  for (const [, block] of stage.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm)) {
    for (const [, name, value] of block!.replace(/\\\n/g, ' ').matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) {
      env[name!] = value!.replace(/^"|"$/g, '');
    }
  }
  return env;
}

/** The command a Dockerfile's `CMD` runs, from its exec form (`CMD ["node", "dist/main.js"]`). */
export function imageCommand(dockerfile: string): string[] {
  const cmd = /^CMD (\[.*\])$/m.exec(lastStage(dockerfile))?.[1];
  if (!cmd) throw new Error('the Dockerfile has no CMD in exec form');
  return JSON.parse(cmd) as string[];
}

/** The lines of a Dockerfile's last stage: what the image is. */
const lastStage = (dockerfile: string) => dockerfile.split(/^FROM .*$/m).at(-1)!;
