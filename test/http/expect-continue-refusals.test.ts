import { connect } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// server.ts promises that a declared body over HTTP_MAX_BODY_BYTES "gets 413 before any byte is read", and a request
// past HTTP_MAX_IN_FLIGHT a 503 "before any work"; the purge refuses a missing token with 401 before its body. A
// client that sends `Expect: 100-continue` (curl does for large bodies, as do many HTTP clients) waits for the
// server's word before it sends its body: Node sent `100 Continue` for every such request before the app could
// decide, so the client was told to upload the body the server then refused (or, past the bound, to send its body
// into a refusal) — the very cost Expect exists to avoid. The refusal must come in place of the 100.
const { start } = closedAfterEach();
const TOKEN = 'a-long-enough-admin-token';

/** Writes `head` on a connection of its own; `text` is all the server has sent on it so far. */
function open(port: number, head: string) {
  const socket = connect(port, '127.0.0.1', () => socket.write(head));
  onTestFinished(() => void socket.destroy());
  const conn = { socket, text: '' };
  socket.setEncoding('utf8').on('data', (chunk: string) => (conn.text += chunk));
  socket.on('error', () => undefined);
  return conn;
}

// The first response head the server sends, informational (100) or final.
const firstHead = /^HTTP\/1\.1 \d{3} [^\r]*\r\n(?:[^\r]+\r\n)*\r\n/;

/** What the server sent until its first response head was complete. */
async function firstAnswer(port: number, head: string) {
  const conn = open(port, head);
  await expect.poll(() => conn.text).toMatch(firstHead);
  return conn;
}

const post = (path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
  `Expect: 100-continue\r\n${extra}\r\n`;

it('a body declared too large is refused with 413 without first being asked for (no 100 Continue)', async () => {
  const { facade } = await start(echo);
  const { text } = await firstAnswer(facade.port, post('/graphql', 10_000_000));
  expect(text).toMatch(/^HTTP\/1\.1 413 /);
  expect(text).not.toMatch(/HTTP\/1\.1 100 /);
});

it('a request past HTTP_MAX_IN_FLIGHT is refused with 503 without first being asked for its body', async () => {
  const { facade } = await start(echo, { HTTP_MAX_IN_FLIGHT: '1' });
  const held = await heldPost(facade.port, 'k');
  try {
    await expect.poll(async () => (await facade.get('/graphql?query=%7B__typename%7D')).status).toBe(503);
    const { text } = await firstAnswer(facade.port, post('/graphql', 30));
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expect(text).not.toMatch(/HTTP\/1\.1 100 /);
    // The client was not told to send its body, so the connection cannot go on: the server closes it.
    expect(text.toLowerCase()).toMatch(/\r\nconnection: close\r\n/);
  } finally {
    held.destroy();
  }
});

it('a purge without the admin token is refused with 401 without first being asked for its body', async () => {
  const { facade } = await start(echo, { CACHE_ADMIN_TOKEN: TOKEN });
  const { text } = await firstAnswer(facade.port, post('/cache/invalidate', 12));
  expect(text).toMatch(/^HTTP\/1\.1 401 /);
  expect(text).not.toMatch(/HTTP\/1\.1 100 /);
  expect(text.toLowerCase()).toMatch(/\r\nconnection: close\r\n/);
});

it('requests the server serves still get 100 Continue, then their answer', async () => {
  const { facade } = await start(echo, { CACHE_ADMIN_TOKEN: TOKEN });
  const body = JSON.stringify({ query: '{ __typename }' });
  const graphql = await firstAnswer(facade.port, post('/graphql', Buffer.byteLength(body)));
  expect(graphql.text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
  graphql.socket.write(body);
  await expect.poll(() => graphql.text).toMatch(/"__typename":"Query"/);
  expect(graphql.text.split('\r\n\r\n')[1]).toMatch(/^HTTP\/1\.1 200 /);

  const purge = '{"all":true}';
  const authorized = await firstAnswer(
    facade.port,
    post('/cache/invalidate', purge.length, `Authorization: Bearer ${TOKEN}\r\n`),
  );
  expect(authorized.text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
  authorized.socket.write(purge);
  await expect.poll(() => authorized.text).toMatch(/"invalidated"/);
  expect(authorized.text.split('\r\n\r\n')[1]).toMatch(/^HTTP\/1\.1 200 /);
});
