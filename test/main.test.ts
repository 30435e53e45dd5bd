import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { faults, startUpstream } from './helpers/upstream.ts';
import { isRunning, repoRoot, runProcess, startProcess } from './helpers/process.ts';

const serverEnv = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PIM_BASE_URL: '' };
const readme = {
  query:
    '{ catalogProducts(catalogId: "MACHINERY", classificationGroupId: "MC-050202", languageId: "en", sorting: "+productId", pageSize: 2) }',
};

/** Starts `node src/main.ts` on this Node 24, as `npm start` does (the image runs the same code built), and waits until it is ready. */
async function start(env: Record<string, string> = {}) {
  const server = startProcess(process.execPath, ['src/main.ts'], { env: { ...serverEnv, ...env } });
  const url = await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
  return { ...server, url: url };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('node src/main.ts with no configuration', () => {
  let server: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.kill());

  it('says it serves the bundled demo catalog, on a loopback listener of its own', () => {
    const demo = server.lines.join('\n').match(/bundled demo catalog at http:\/\/127\.0\.0\.1:(\d+)\/pxm\/pimapi\/v1/);
    expect(demo).not.toBeNull();
    expect(demo![1]).not.toBe(new URL(server.url).port);
  });

  // HOST names one address: `localhost` may resolve to another (::1 first), which nothing listens on.
  it('says the address of HOST it listens at', () => {
    expect(server.lines.join('\n')).toMatch(/GraphQL server ready at http:\/\/127\.0\.0\.1:\d+\/graphql/);
  });

  it('answers the README example from the demo catalog over loopback HTTP', async () => {
    const body = await (await post(server.url, readme)).json();
    expect(body.errors).toBeUndefined();
    expect(body.data.catalogProducts).toMatchObject({
      status: 200,
      data: [{ productId: 'A789-BC-2015' }, expect.any(Object)],
    });
  });

  it('serves GraphiQL to a browser, and no demo route on its own port', async () => {
    const response = await fetch(server.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/graphiql/i);
    const demoPath = await fetch(new URL('/pxm/pimapi/v1/classifications/ECLASS-DEMO/groups', server.url));
    expect(demoPath.status).toBe(404);
  });

  it('logs one line and exits 0 on SIGTERM, its port closed', async () => {
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.lines.filter((line) => line.includes('shutting down'))).toHaveLength(1);
    await expect(fetch(server.url)).rejects.toThrow();
  });
});

describe('SIGTERM with a request in flight', () => {
  it('lets it finish, refuses new connections, and exits 0', async () => {
    const upstream = await startUpstream();
    onTestFinished(() => upstream.close());
    upstream.respond(faults.slowHeaders(1_000));
    const server = await start({ PIM_BASE_URL: upstream.url, SHUTDOWN_GRACE_MS: '10000' });
    onTestFinished(() => server.kill());

    const inFlight = post(server.url, { query: '{ classificationGroups(classificationId: "A") }' });
    await expect.poll(() => upstream.requests.length).toBe(1);
    server.child.kill('SIGTERM');
    await server.waitFor(/SIGTERM received, shutting down/);
    await expect(fetch(server.url)).rejects.toThrow();
    const body = await (await inFlight).json();
    expect(body.data.classificationGroups.data).toEqual([{ url: '/pxm/pimapi/v1/classifications/A/groups' }]);
    expect(await server.exited).toBe(0);
  });
});

describe('METRICS_PORT', () => {
  it('serves the metrics on their own port, and not on the GraphQL port', async () => {
    const server = await start({ METRICS_PORT: '0' });
    onTestFinished(() => server.kill());
    const metricsUrl = await server.waitFor(/Metrics served at (http:\/\/[^\s"]+)/);
    await post(server.url, { query: '{ __typename }' });

    const onMain = await fetch(new URL('/metrics', server.url));
    expect(onMain.status).toBe(404);
    const scrape = await fetch(metricsUrl);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(scrape.headers.get('cache-control')).toBe('no-store');
    expect(await scrape.text()).toContain(
      'graphql_operations_total{operation_type="query",operation_name="anonymous"} 1',
    );
    expect((await fetch(new URL('/graphql', metricsUrl))).status).toBe(404);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});

describe('npm start', () => {
  it('passes SIGTERM through to the server, which shuts down and closes its port', async () => {
    const npm = startProcess('npm', ['start'], { env: serverEnv });
    onTestFinished(() => npm.kill());
    const url = await npm.waitFor(/ready at (http:\/\/\S+\/graphql)/);
    const pid = Number(await npm.waitFor(/"pid":(\d+)/));
    expect(pid).not.toBe(npm.child.pid);

    npm.child.kill('SIGTERM');
    expect(await npm.exited).toBe(0);
    expect(npm.lines.filter((line) => line.includes('SIGTERM received, shutting down'))).toHaveLength(1);
    expect(isRunning(pid)).toBe(false);
    await expect(fetch(url)).rejects.toThrow();
  });
});

describe('a bug nobody caught', () => {
  // Injected from outside the server's code: a preload that fails on SIGUSR2, as a bug would.
  const failOnSignal = (failure: string) =>
    `data:text/javascript,process.on('SIGUSR2', () => setImmediate(() => { ${failure} }))`;

  it.each([
    ['an uncaught exception', `throw new Error('injected crash')`, 'injected crash'],
    ['an unhandled rejection', `Promise.reject(new Error('injected rejection'))`, 'injected rejection'],
  ])('%s: one JSON error line with its stack, and exit code 1', async (_, failure, message) => {
    const server = startProcess(process.execPath, ['--import', failOnSignal(failure), 'src/main.ts'], {
      env: serverEnv,
    });
    onTestFinished(() => server.kill());
    await server.waitFor(/ready at (http:\/\/\S+\/graphql)/);
    server.child.kill('SIGUSR2');
    expect(await server.exited).toBe(1);
    const errors = server.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const crash = errors.filter((line) => line.level >= 50);
    expect(crash).toHaveLength(1);
    expect(crash[0]).toMatchObject({ level: 50, msg: 'Uncaught exception, exiting', err: { message } });
    expect(crash[0].err.stack).toContain(message);
    // Nothing but JSON lines: Node printed no stack of its own.
    expect(server.stderr).toEqual([]);
  });
});

describe('start-up refusals: exit code 1 and one line on stderr', () => {
  const refused = async (env: Record<string, string>) => {
    const { code, stderr } = await runProcess(process.execPath, ['src/main.ts'], { env: { ...serverEnv, ...env } });
    return { code, stderr };
  };

  // Nothing is served, so nothing says it is: the metrics port listens after the GraphQL port, and is
  // checked before "ready" is said.
  it.each([
    ['a port already in use', 'PORT', /Serving the bundled demo catalog/],
    [
      'a METRICS_PORT already in use, after the GraphQL port listened',
      'METRICS_PORT',
      /ready at|Serving the bundled demo catalog/,
    ],
  ])('%s', async (_, name, unsaid) => {
    const busy = await start();
    onTestFinished(() => busy.kill());
    const port = new URL(busy.url).port;
    const { code, lines, stderr } = await runProcess(process.execPath, ['src/main.ts'], {
      env: { ...serverEnv, [name]: port },
    });
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: [`Cannot listen on 127.0.0.1 port ${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`],
    });
    expect(lines.join('\n')).not.toMatch(unsaid);
  });

  it('a bad environment names the variable', async () => {
    expect(await refused({ PORT: 'eighty' })).toEqual({
      code: 1,
      stderr: ['Invalid PORT="eighty": expected an integer from 0 to 65535'],
    });
  });

  it('a trusted-document manifest that cannot be read', async () => {
    const { code, stderr } = await refused({ PERSISTED_DOCUMENTS_PATH: 'no-such-manifest.json' });
    expect(code).toBe(1);
    expect(stderr).toEqual([
      expect.stringMatching(/^PERSISTED_DOCUMENTS_PATH no-such-manifest\.json cannot be read as JSON: ENOENT/),
    ]);
  });

  it('production without PIM_BASE_URL', async () => {
    expect(await refused({ NODE_ENV: 'production' })).toEqual({
      code: 1,
      stderr: [
        'PIM_BASE_URL is required when NODE_ENV=production (set PIM_DEMO=true to serve the bundled demo catalog)',
      ],
    });
  });
});

/** The first Node.js older than 24 on PATH (the machine's own), with its version. */
function olderNode(): { path: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(dir, 'node');
    try {
      const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      if (Number(version.split('.')[0]) < 24) return { path, version };
    } catch {
      // No node in this folder.
    }
  }
  return undefined;
}

const older = olderNode();

// Without one, skipped with what to install, which the run's last line counts.
const needsOlder = older ? {} : { skip: true, meta: { missing: 'put a Node.js older than 24 on PATH' } };
describe('an older Node.js', needsOlder, () => {
  it('npm start stops at once with one line: what it needs and what it found', async () => {
    const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    // The start script as npm runs it, with the older node first on PATH (npm would put the
    // `node` devDependency first, which a production install does not have).
    const { code, lines } = await runProcess('sh', ['-c', scripts.start], {
      env: { ...serverEnv, PATH: `${dirname(older!.path)}${delimiter}${process.env.PATH}` },
    });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^This server needs Node\\.js 24 or later; found Node\\.js ${older!.version.replaceAll('.', '\\.')} \\(/.+\\)$`,
      ),
    );
  });
});
