import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

const SERVER_KEY = 'server-key-987654';
const CALLER_KEY = 'caller-key-123456';
const TOKEN = 'tok/abcdef"123456';
const secrets = [SERVER_KEY, CALLER_KEY, TOKEN, JSON.stringify(TOKEN).slice(1, -1)];
const statuses = [200, 400, 401, 403, 404, 422, 429, 500, 503];
const percentOf = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
// Ways services write a value into a URL or a form.
const encodings: Record<string, (text: string) => string> = {
  component: encodeURIComponent,
  form: (text) => new URLSearchParams({ k: text }).toString().slice(2),
  strict: (text) => encodeURIComponent(text).replace(/[!'()*]/g, percentOf),
  python: (text) =>
    encodeURIComponent(text)
      .replace(/[!'()*]/g, percentOf)
      .replaceAll('%2F', '/'),
  dotnet: (text) => encodeURIComponent(text).replace(/[~']/g, percentOf).replaceAll('%20', '+'),
  php: (text) =>
    encodeURIComponent(text)
      .replace(/[!'()*~]/g, percentOf)
      .replaceAll('%20', '+'),
};

let upstream: Upstream;
let facade: Facade;
const { logger, raw: log } = captureLogs('trace');
const spans = new InMemorySpanExporter();

beforeAll(async () => {
  // Every status, with every credential header echoed in its body (message and data) and headers.
  upstream = await startUpstream((req, res) => {
    const status = Number(/status-(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
    const plain = `key ${req.headers['x-api-key']} auth ${req.headers.authorization}`;
    // As a service that echoes the request it got as a URL or a form: each credential percent-encoded.
    const encoding = Object.keys(encodings).find((name) => req.url?.includes(`encoded-${name}`));
    const echoed = encoding ? encodings[encoding]!(plain) : plain;
    res.writeHead(status, { 'content-type': 'application/json', 'x-echo': echoed.replace(/[^\x20-\x7e]/g, '') });
    const body = JSON.stringify({ status, error: `No catalog for ${echoed}`, data: [{ echoed }] });
    // As Gson writes `=` and other characters by default: \u escapes, the same JSON once parsed.
    const escape = (text: string) =>
      text.replace(/[^a-z ]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    if (req.url?.includes('escaped')) return res.end(body.replaceAll(echoed, escape(echoed)));
    // And as PHP's json_encode writes a `/`: escaped (Python's quote leaves it as it is in a URL).
    res.end(encoding ? body.replaceAll('/', '\\/') : body);
  });
  facade = await startFacade(
    upstream.url,
    { PIM_API_KEY: SERVER_KEY, PIM_RETRIES: '0', PIM_CACHE: 'false', GRAPHQL_MAX_ALIASES: '20' },
    { logger, extras: { spanExporter: spans } },
  );
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const query = `{ ${statuses.map((s) => `s${s}: classificationGroups(classificationId: "status-${s}")`).join(' ')} }`;

async function post(headers: Record<string, string>) {
  const answer = await facade.post(query, undefined, headers);
  return { text: `${JSON.stringify([...answer.headers])}${answer.text}` };
}

describe('an upstream that echoes credentials', () => {
  it.each([
    ['the server key', {}],
    ['forwarded credentials', { 'x-api-key': CALLER_KEY, authorization: `Bearer ${TOKEN}` }],
  ])('never hands %s to a response, a log line or a span', async (_name, headers) => {
    const { text } = await post(headers);
    // The upstream really did echo them.
    expect(upstream.requests.length).toBeGreaterThanOrEqual(statuses.length);
    const spanText = JSON.stringify(
      spans
        .getFinishedSpans()
        .map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })),
    );
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(log.join('')).not.toContain(secret);
      expect(spanText).not.toContain(secret);
    }
    // Blanked out, not dropped: the 404's own message and the data still reach the client.
    expect(text).toContain('No catalog for key [redacted]');
    expect(text).toContain('"echoed":"key [redacted]');
  });
});

describe('credentials that overlap', () => {
  it('blanks out the whole longer one when another is its prefix', async () => {
    const short = 'overlap-123456';
    const long = `${short}TAIL789`;
    const { text } = await post({ 'x-api-key': short, authorization: long });
    expect(text).not.toContain(short);
    expect(text).not.toContain('TAIL789');
    expect(text).toContain('"echoed":"key [redacted] auth [redacted]"');
  });
});

describe('an upstream that echoes credentials in \\u escapes', () => {
  it('never hands them to a response either', async () => {
    const answer = await facade.post(
      '{ a: classificationGroups(classificationId: "escaped-status-404") b: classificationGroups(classificationId: "escaped") }',
      undefined,
      { 'x-api-key': CALLER_KEY },
    );
    expect(upstream.requests.map((r) => r.url).join()).toContain('escaped');
    for (const secret of secrets) expect(answer.text).not.toContain(secret);
    expect(answer.text).toContain('"echoed":"key [redacted]');
  });
});

describe('an upstream that echoes credentials percent-encoded', () => {
  it.each(
    Object.keys(encodings).flatMap((encoding) =>
      [
        CALLER_KEY,
        'Xy78Q~abcDEF.ghi_jkl+mno=',
        "key!(prod)'123456",
        'Ab~cd*ef-123456',
        'correct horse battery staple',
      ].map((key) => [encoding, key] as const),
    ),
  )('never hands them to a response either: %s, %s', async (encoding, key) => {
    const answer = await facade.post(
      `{ a: classificationGroups(classificationId: "encoded-${encoding}-status-404") b: classificationGroups(classificationId: "encoded-${encoding}") }`,
      undefined,
      { 'x-api-key': key, authorization: `Bearer ${TOKEN}` },
    );
    expect(upstream.requests.map((r) => r.url).join()).toContain(`encoded-${encoding}`);
    for (const secret of [SERVER_KEY, key, TOKEN, `Bearer ${TOKEN}`]) {
      const encoded = encodings[encoding]!(secret);
      expect(answer.text).not.toContain(encoded);
      expect(answer.text).not.toContain(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
    }
    expect(answer.text).toContain(`"echoed":"${encodings[encoding]!('key ')}[redacted]`);
  });
});
