import type { Dispatcher } from 'undici';
import { API_PREFIX } from './endpoints.ts';
import { pimError } from './errors.ts';

/**
 * Builds the outgoing URL and checks it after the fact: same origin as the base URL, the path
 * unchanged by URL parsing (no dot segment resolved away) and inside `<base path>/pxm/pimapi/v1/`.
 * Ids are already encoded by endpoints.ts; this is the second lock, against any future slip.
 */
export function checkedUrl(base: URL, path: string): string {
  const basePath = base.pathname.replace(/\/+$/, '');
  const raw = `${base.origin}${basePath}${path}`;
  const url = new URL(raw);
  const expectedPath = `${basePath}${path.split('?')[0]}`;
  const inside =
    url.origin === base.origin &&
    url.pathname === expectedPath &&
    url.pathname.startsWith(`${basePath}${API_PREFIX}/`) &&
    url.hash === '' &&
    url.username === '' &&
    url.password === '';
  if (!inside) throw pimError('BAD_USER_INPUT', new Error(`outgoing URL ${raw} leaves ${basePath}${API_PREFIX}/`));
  return raw;
}

/**
 * Reads a response body as text, at most `maxBytes` of it. A bigger body (declared or streamed)
 * fails with UPSTREAM_ERROR and the stream is destroyed, which closes its connection instead of
 * reading the rest into memory.
 */
export async function readLimitedText(response: Dispatcher.ResponseData, maxBytes: number): Promise<string> {
  const { body, headers, statusCode } = response;
  const tooLarge = () => {
    body.destroy();
    return pimError('UPSTREAM_ERROR', new Error(`response body over ${maxBytes} bytes`), statusCode);
  };
  if (Number(headers['content-length']) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
