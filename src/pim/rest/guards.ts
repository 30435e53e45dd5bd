import type { Dispatcher } from 'undici';
import { API_PREFIX } from './endpoints.ts';
import type { ByteAccount } from './byte-limits.ts';
import { pimError } from './errors.ts';

/**
 * Builds the outgoing URLs of one base URL and checks each after the fact: same origin as the base
 * URL, the path unchanged by URL parsing (no dot segment resolved away) and inside
 * `<base path>/pxm/pimapi/v1/`. Ids are already encoded by endpoints.ts; this is the second lock,
 * against any future slip. What depends only on the base is worked out once, not per call.
 */
export function urlChecker(base: URL): (path: string) => string {
  const { origin } = base;
  const basePath = base.pathname.replace(/\/+$/, '');
  const root = `${origin}${basePath}`;
  const inside = `${basePath}${API_PREFIX}/`;
  return (path) => {
    const raw = `${root}${path}`;
    const url = new URL(raw);
    const query = path.indexOf('?');
    const ok =
      url.origin === origin &&
      url.pathname === `${basePath}${query === -1 ? path : path.slice(0, query)}` &&
      url.pathname.startsWith(inside) &&
      url.hash === '' &&
      url.username === '' &&
      url.password === '';
    if (!ok) throw pimError('BAD_USER_INPUT', new Error(`outgoing URL ${raw} leaves ${inside}`));
    return raw;
  };
}

/**
 * Reads a response body as text, at most `maxBytes` of it, charging it to the request's byte account:
 * a declared length before the first byte is read, what streams past it as it comes. A bigger body
 * (declared or streamed) fails with UPSTREAM_ERROR, one past the account's caps with
 * UPSTREAM_TOO_LARGE; either way the stream is destroyed, which closes its connection instead of
 * reading the rest into memory, and the bytes charged are given back. Charged as read, bodies that
 * cannot all fit would each take part of the process cap and fail near their ends, none answered.
 */
export async function readLimitedText(
  response: Dispatcher.ResponseData,
  maxBytes: number,
  account: ByteAccount,
): Promise<{ text: string; bytes: number }> {
  const { body, headers, statusCode } = response;
  // The caller's page, too large to read: no word on whether the PIM answers JSON (upstream-faults.ts).
  const tooLarge = () =>
    Object.assign(pimError('UPSTREAM_ERROR', new Error(`response body over ${maxBytes} bytes`), statusCode), {
      oversized: true,
    });
  const chunks: Buffer[] = [];
  let size = 0;
  let charged = 0;
  // Counted until read or cut, whatever becomes of the request that started the call meanwhile.
  account.reading(true);
  try {
    const declared = Number(headers['content-length']);
    if (declared > maxBytes) throw tooLarge();
    if (declared > 0) {
      account.charge(declared, statusCode, declared);
      charged = declared;
    }
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxBytes) throw tooLarge();
      size += chunk.length;
      if (size > charged) {
        account.charge(size - charged, statusCode, size);
        charged = size;
      }
      chunks.push(chunk);
    }
    if (charged > size) account.refund(charged - size);
  } catch (error) {
    // Refused at its headers, nothing listens on the body yet; one already whole (a small answer) has no listener of
    // undici's either: its abort error would be an uncaught exception.
    body.on('error', () => undefined);
    body.destroy();
    account.refund(charged);
    throw error;
  } finally {
    account.reading(false);
  }
  // `bytes`: what the account was charged, which the text decoded may not be (each byte that is not UTF-8 decodes into
  // U+FFFD, three bytes).
  return { text: Buffer.concat(chunks, size).toString('utf8'), bytes: size };
}
