import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

// docs/operations.md, Logs: "Headers are never logged and credentials are redacted." A request target in absolute
// form (RFC 9112 §3.2.2, what a client configured to use a proxy sends) may carry userinfo. Served, it is logged as
// its path; refused for its two Host headers (checked before the target is read as its path), its `request completed`
// line carries the raw target, password included.
const { start } = closedAfterEach();

const exchange = (port: number, text: string) =>
  new Promise<string>((resolve) => {
    let got = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (chunk) => (got += chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve(got));
  });

describe('the line of a refused request whose target is in absolute form with userinfo', () => {
  it('never carries the password', async () => {
    const { logger, lines, raw } = captureLogs('info');
    const { facade } = await start(echo, {}, { logger });
    const answer = await exchange(
      facade.port,
      'GET http://admin:hunter2-secret-pw@x/graphql HTTP/1.1\r\nHost: x\r\nHost: y\r\nx-request-id: userinfo\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await expect.poll(() => lines.filter((l) => l.reqId === 'userinfo')).toHaveLength(1);
    expect(raw.join('')).not.toContain('hunter2-secret-pw');
  });
});
