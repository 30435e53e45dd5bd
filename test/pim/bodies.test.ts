import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

const servers = closedAfterEach();

// RFC 8259 §8.1 lets a parser ignore a byte order mark; some .NET and Java services put one first. It was
// read as "2xx that is not JSON": an error for every field, and a PIM counted as answering garbage.
it('reads a JSON body that starts with a byte order mark', async () => {
  const { facade } = await servers.start((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('\uFEFF{"status":200,"data":[{"id":"G"}]}'),
  );
  const { body } = await facade.post('{ classificationGroups(classificationId: "C") }');
  expect(body).toEqual({ data: { classificationGroups: { status: 200, data: [{ id: 'G' }] } } });
});

// UPSTREAM.md: every answer is the `{status, meta, data}` envelope. A 200 of `null` became a null field with no
// error, as if the group existed and were empty.
it.each(['null', '42', '"maintenance"', '[]'])('refuses a 2xx whose JSON is %s, not the envelope', async (json) => {
  const { facade } = await servers.start((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(json),
  );
  const { body } = await facade.post('{ classificationGroups(classificationId: "C") }');
  expect(body.data.classificationGroups).toBeNull();
  expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
});

// Credentials are looked for with \u escapes written plainly first; an escaped backslash stays what it is.
it('reads escapes as JSON does while it looks for echoed credentials', async () => {
  const text = String.raw`{"status":200,"data":[{"path":"C:\\u0041\u003d\"\n\u00e9"}]}`;
  const { facade } = await servers.start((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(text),
  );
  const { body } = await facade.post(
    '{ classificationGroups(classificationId: "C") }',
    {},
    { 'x-api-key': 'key-1234567' },
  );
  expect(body.data.classificationGroups).toEqual(JSON.parse(text));
});

// Without Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3): a PIM or gateway that gzipped its JSON
// made every field "not JSON" and the PIM unready. The façade reads only the identity coding, and says so.
it('asks for the identity coding, which a PIM that compresses then sends', async () => {
  const json = '{"status":200,"data":[{"id":"G"}]}';
  const { facade, upstream } = await servers.start((req, res) =>
    req.headers['accept-encoding'] === 'identity'
      ? res.writeHead(200, { 'content-type': 'application/json' }).end(json)
      : res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(json)),
  );
  const { body } = await facade.post('{ classificationGroups(classificationId: "C") }');
  expect(body).toEqual({ data: { classificationGroups: { status: 200, data: [{ id: 'G' }] } } });
  expect(upstream.requests[0]?.headers['accept-encoding']).toBe('identity');
});

// A gateway in between (a CDN, a compressing proxy) may compress whatever the call asks: every field then failed as
// "not JSON", and the operator was told of a maintenance or proxy page. The warning now names the coding.
it('tells the operator of a 2xx compressed despite identity, not of a page that is not JSON', async () => {
  const json = '{"status":200,"data":[{"id":"G"}]}';
  const { logger, lines } = captureLogs('info');
  const { facade } = await servers.start(
    (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'GZIP' }).end(gzipSync(json)),
    { PIM_CACHE: 'false' },
    { logger },
  );
  const { body } = await facade.post('{ classificationGroups(classificationId: "C") }');
  expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  const warned = lines.filter((line) => line.level === 40 && /^Upstream answers 2xx/.test(line.msg));
  expect(warned).toMatchObject([{ encoding: 'gzip', status: 200, msg: expect.stringMatching(/identity/) }]);
});
