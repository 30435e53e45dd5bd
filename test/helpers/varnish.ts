import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { requireProgram } from './programs.ts';

/**
 * A minimal VCL: the façade as the only backend and Varnish's built-in rules (hash on URL and
 * Host, honour Cache-Control and Vary, pass Authorization and Cookie, never store private or
 * no-store), plus an `x-cache` header telling hits from misses.
 */
export function minimalVcl(backendPort: number): string {
  return `vcl 4.1;
backend facade { .host = "127.0.0.1"; .port = "${backendPort}"; }
sub vcl_deliver {
  if (obj.hits > 0) { set resp.http.x-cache = "hit"; } else { set resp.http.x-cache = "miss"; }
}
`;
}

/**
 * Starts Debian's `varnishd` in the foreground on a free loopback port in front of the backend
 * on `backendPort`, and resolves once it answers `/health` through that backend. Files that use it
 * carry the `varnishd` tag, so they are skipped where the program is missing.
 */
export async function startVarnish(backendPort: number) {
  const varnishd = requireProgram('varnishd');
  const dir = await mkdtemp(join(tmpdir(), 'varnish-'));
  // The cache process runs as Varnish's own user and must read the VCL.
  await chmod(dir, 0o755);
  const vcl = join(dir, 'default.vcl');
  await writeFile(vcl, minimalVcl(backendPort));
  const port = await freePort();
  const args = ['-F', '-a', `127.0.0.1:${port}`, '-f', vcl, '-n', join(dir, 'work'), '-s', 'malloc,32m'];
  const child = spawn(varnishd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-4_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = once(child, 'exit');
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, () => child.exitCode !== null);
  } catch (error) {
    await close();
    throw new Error(`varnishd did not start (${(error as Error).message}): ${output}`);
  }
  return { url, port, close };
}

export type Varnish = Awaited<ReturnType<typeof startVarnish>>;

async function waitForHealth(url: string, exited: () => boolean): Promise<void> {
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (exited()) throw new Error('it exited');
    const status = await fetch(`${url}/health`).then(
      (r) => r.arrayBuffer().then(() => r.status),
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('no answer within 20 s');
}
