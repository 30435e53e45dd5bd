import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startProcess, type TestProcess } from '../helpers/process.ts';
import { echo, startUpstream, type Upstream, type UpstreamHandler } from '../helpers/upstream.ts';

let upstream: Upstream | undefined;
let server: TestProcess | undefined;
const agents: Agent[] = [];
afterEach(async () => {
  server?.kill();
  for (const agent of agents.splice(0)) agent.destroy();
  await upstream?.close();
});

/** What one POST got: its status and `Connection` header, or the error code of a request that got no answer. */
type Outcome = { status: number; connection: string | undefined } | { error: string };

function postOnce(port: number, agent: Agent, id: string): Promise<Outcome> {
  const body = JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` });
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(body);
  });
}

/** One keep-alive client sending POSTs one after another until it is told to close or gets no answer. */
async function client(port: number, name: string): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  const outcomes: Outcome[] = [];
  for (let i = 0; i < 2_000; i++) {
    const outcome = await postOnce(port, agent, `${name}-${i}`);
    outcomes.push(outcome);
    if ('error' in outcome) break;
  }
  return outcomes;
}

describe('SIGTERM with keep-alive clients sending POSTs one after another', () => {
  it('answers what was sent with Connection: close, then refuses; no request is reset', async () => {
    // Answers at once, until `hold` keeps every new call waiting: then each client has one request in flight.
    let hold = false;
    const held: Array<() => void> = [];
    const handler: UpstreamHandler = (req, res) => (hold ? held.push(() => echo(req, res)) : echo(req, res));
    upstream = await startUpstream(handler);
    server = startProcess(process.execPath, ['src/main.ts'], {
      env: { PORT: '0', HOST: '127.0.0.1', PIM_BASE_URL: upstream.url, PIM_CACHE: 'false', SHUTDOWN_GRACE_MS: '5000' },
    });
    const port = Number(await server.waitFor(/ready at http:\/\/127\.0\.0\.1:(\d+)\//));

    // A fifth keep-alive connection, idle since its one answer.
    const idle = connect(port, '127.0.0.1');
    const idleClosed = new Promise<number>((resolve) => idle.once('close', () => resolve(Date.now())));
    let idleAnswer = '';
    // Read, or the server's FIN would never be seen.
    idle.on('data', (chunk) => (idleAnswer += chunk));
    idle.on('error', () => undefined);
    idle.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');

    await expect.poll(() => idleAnswer).toMatch(/^HTTP\/1\.1 200 .*\r\nConnection: keep-alive\r\n/s);
    const clients = ['a', 'b', 'c', 'd'].map((name) => client(port, name));
    await expect.poll(() => upstream!.requests.length, { timeout: 5_000 }).toBeGreaterThan(20);
    hold = true;
    await expect.poll(() => held.length).toBe(4);
    server.child.kill('SIGTERM');
    await server.waitFor(/SIGTERM received/);
    const signalled = Date.now();
    hold = false;
    for (const answer of held) answer();

    const outcomes = await Promise.all(clients);
    const afterSignal = outcomes.map((o) => o.slice(-2));
    const resets = outcomes.flat().filter((o) => 'error' in o && o.error !== 'ECONNREFUSED');
    expect(resets, `${resets.length} requests without an answer`).toEqual([]);
    // The request each client had in flight is answered, with Connection: close; its next one is refused.
    expect(afterSignal).toEqual(Array(4).fill([{ status: 200, connection: 'close' }, { error: 'ECONNREFUSED' }]));
    expect(await idleClosed).toBeLessThan(signalled + 2_000);
    expect(await server.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(4_000);
  }, 30_000);
});
