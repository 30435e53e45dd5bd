import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const tsx = new URL('../node_modules/.bin/tsx', import.meta.url).pathname;
const main = new URL('../src/main.ts', import.meta.url).pathname;

/** Starts `src/main.ts` as `npm start` does and resolves with its GraphQL URL once it logs readiness. */
async function start(env: Record<string, string>) {
  const child = spawn(tsx, [main], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const match = /ready at (http:\/\/\S+\/graphql)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  return { child, url: url.replace('localhost', '127.0.0.1'), lines };
}

describe('npm start with no configuration', () => {
  let server: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    server = await start({ PIM_BASE_URL: '' });
  });
  afterAll(() => {
    server.child.kill('SIGKILL');
  });

  it('says it serves the bundled demo catalog', () => {
    expect(server.lines.join('\n')).toMatch(/bundled demo catalog/);
  });

  it('answers the README example from the demo catalog over loopback HTTP', async () => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ catalogProducts(catalogId: "MACHINERY", classificationGroupId: "MC-050202", languageId: "en", sorting: "+productId", pageSize: 2) }',
      }),
    });
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.catalogProducts).toMatchObject({
      status: 200,
      data: [{ productId: 'A789-BC-2015' }, expect.any(Object)],
    });
  });

  it('serves GraphiQL to a browser', async () => {
    const response = await fetch(server.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/graphiql/i);
  });

  it('exits 0 on SIGTERM', async () => {
    server.child.kill('SIGTERM');
    const [code] = await once(server.child, 'exit');
    expect(code).toBe(0);
  });
});

describe('a port already in use', () => {
  it('stops the process with one line', async () => {
    const busy = await start({ PIM_BASE_URL: '' });
    const port = new URL(busy.url).port;
    const child = spawn(tsx, [main], {
      env: { ...process.env, PORT: port, HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    busy.child.kill('SIGKILL');
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      `Cannot listen on 127.0.0.1 port ${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
    );
  });
});

describe('a bad environment', () => {
  it('stops the process with one line naming the variable', async () => {
    const child: ChildProcess = spawn(tsx, [main], {
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(stderr.trim()).toBe('Invalid PORT="eighty": expected an integer from 0 to 65535');
  });
});
