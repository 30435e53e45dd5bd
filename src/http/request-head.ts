import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

// What a request's head must be before anything is served (its Host, its target, its body's size and coding), read
// by http/server.ts in its order. Each check names what it keeps out.

// A host name or IPv4 address, or an IPv6 literal in brackets, with an optional port (RFC 9110 §7.2),
// that the WHATWG URL parser Yoga builds the request's URL with also takes (no port past 65535, no bad literal).
const hostPattern = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const isHost = (host: string) => hostPattern.test(host) && URL.canParse(`http://${host}`);
// Clients send the same Host on every request: the last one found valid is not checked again.
let lastHost: string | undefined;
export const isKnownHost = (host: string) => host === lastHost || (isHost(host) && ((lastHost = host), true));
/**
 * Whether a request's Host names this server, by `allowed` (HTTP_ALLOWED_HOSTS: names, `*.example.com` for any name under
 * it; empty, any host does). A page that rebinds its own DNS name to this server's address reaches it with that name in
 * Host: the list keeps such a page from reading the catalog with the server's key (PIM_API_KEY) through a browser. An
 * IP address, `localhost` and names under it never come from DNS, so always name this server (the probes use the pod's
 * address). `host` is one isKnownHost took.
 */
export function createHostCheck(allowed: readonly string[]): (host: string) => boolean {
  if (allowed.length === 0) return () => true;
  const entries = allowed.map((entry) => entry.replace(/\.$/, ''));
  const names = new Set(entries.filter((entry) => !entry.startsWith('*.')));
  const suffixes = entries.filter((entry) => entry.startsWith('*.')).map((entry) => entry.slice(1));
  const named = (host: string) => {
    // As the WHATWG parser reads it (lower case, IPv4 in any of its spellings made dotted), without a final dot.
    const name = new URL(`http://${host}`).hostname.replace(/\.$/, '');
    if (name.startsWith('[') || isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true;
    return names.has(name) || suffixes.some((suffix) => name.endsWith(suffix));
  };
  // Clients send the same few Host values: the verdicts of the last ones are kept, a bounded few.
  const verdicts = new Map<string, boolean>();
  return (host) => {
    let verdict = verdicts.get(host);
    if (verdict === undefined) {
      verdict = named(host);
      if (verdicts.size >= 64) verdicts.clear();
      if (host.length <= 255) verdicts.set(host, verdict);
    }
    return verdict;
  };
}
// The WHATWG parser also reads `\` as `/` in an http URL: a backslash anywhere is refused with them.
export const unnormalPath = /\\|\/\/|(^|\/)(\.|%2e){1,2}(\/|$)/i;

/** The messages of the server's own refusals: by status, then the head's others. */
export const messages: Record<number, string> = {
  400: 'The Host header is not a valid host',
  404: 'Nothing is served at a path with empty, `.` or `..` segments, or a backslash',
  421: 'This server does not answer to that Host name: ask by one of its own names or its address',
  411: 'A request body needs a Content-Length header',
  413: 'The request body is too large',
  417: 'Only `Expect: 100-continue` is understood: send the request without Expect',
  503: 'The server is busy with other requests; retry in a second',
};
export const codingMessage = 'A request body is sent as it is, without Content-Encoding (or with identity)';
export const fragmentMessage = 'A request target has no fragment: send it without `#`';
export const targetMessage = 'A request target is a path (`/graphql`) or an absolute http URL';

/** The paths Yoga serves besides the metrics (`ServedApp.paths`). */
export interface YogaPaths {
  graphql: string;
  assets: string | undefined;
}

/** True for Yoga's endpoint (a trailing `/` too) and GraphiQL's files: Yoga would run GraphQL at any URL ending in it. */
export const servedByYoga = (path: string, paths: YogaPaths) =>
  path === paths.graphql ||
  (path.length === paths.graphql.length + 1 && path.startsWith(paths.graphql) && path.endsWith('/')) ||
  isAssetPath(path, paths);

/** A path of GraphiQL's files, where GraphiQL is served. */
export const isAssetPath = (path: string, { assets }: YogaPaths) =>
  assets !== undefined && path.startsWith(assets) && path.charCodeAt(assets.length) === 47;

// RFC 9110 §9.3.2: a HEAD is served as its GET, whose content node:http does not send (Yoga serves GET and POST only).
// Logged as the HEAD it was.
const heads = new WeakSet<IncomingMessage>();
export function servedAsGet(req: IncomingMessage): void {
  heads.add(req);
  req.method = 'GET';
}

/** The method a request came with: `method` (Yoga's), or HEAD for one served as its GET. */
export const sentMethod = (serverContext: unknown, method: string): string =>
  heads.has((serverContext as { req?: IncomingMessage } | undefined)?.req as IncomingMessage) ? 'HEAD' : method;

/**
 * RFC 9112 §3.2: whether a request names no one host, so is refused with 400. Two Host headers leave which is meant to
 * whoever reads them (Node keeps the first); an HTTP/1.1 request has one (the servers turn Node's own check off: its
 * 400 said nothing, and was neither logged nor counted).
 */
export function hostMissingOrTwice({ rawHeaders: raw, httpVersion }: IncomingMessage): boolean {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') count++;
  return count > 1 || (count === 0 && httpVersion === '1.1');
}

// Lists by definition, whose lines a proxy splits or adds to: HTTP/2 splits Cookie (RFC 9113 §8.2.3).
const LISTS = new Set(['cookie', 'forwarded', 'x-forwarded-for', 'via']);

/**
 * Finds a credential header (`names`) that a request's raw head carries twice with different values. Node keeps the
 * first Authorization and joins two X-API-KEY as `a, b`: a gateway in front that reads the other one disagrees with
 * the PIM on who is asking (RFC 9110 §5.3). The same value twice, or an empty one beside it, leaves no doubt: that
 * value is what the request carries, where Node joined `k, k` or `, k` into a key the PIM does not know.
 */
export function createCredentialCheck(names: readonly string[]) {
  const single = new Set(names.filter((name) => !LISTS.has(name)));
  const lengths = new Set([...single].map((name) => name.length));
  return (req: IncomingMessage): string | undefined => {
    const raw = req.rawHeaders;
    // Name, value, name, value: a request carries one or two credential headers.
    let seen: string[] | undefined;
    let twice = false;
    for (let i = 0; i < raw.length; i += 2) {
      if (!lengths.has(raw[i]!.length)) continue;
      const name = raw[i]!.toLowerCase();
      if (!single.has(name)) continue;
      seen ??= [];
      const value = raw[i + 1]!.trim();
      for (let k = 0; k < seen.length; k += 2) {
        if (seen[k] !== name) continue;
        if (value !== '' && seen[k + 1] !== '' && seen[k + 1] !== value) return name;
        twice = true;
      }
      seen.push(name, value);
    }
    // Rare: a header sent more than once is set again to its one value (or to none, all being empty).
    if (!twice) return undefined;
    for (let k = 0; k < seen!.length; k += 2) req.headers[seen![k]!] = '';
    for (let k = 0; k < seen!.length; k += 2) if (seen![k + 1] !== '') req.headers[seen![k]!] = seen![k + 1];
    return undefined;
  };
}

/** The 400's message for a header sent twice, named as it is usually written. */
export const oneHeaderMessage = (name: string) =>
  `A request has one ${name.replace(/(^|-)[a-z]/g, (start) => start.toUpperCase())} header`;

// RFC 9112 §3.2.2: a target in absolute form (as a client sends it to a proxy) is served, its authority standing in
// for Host. Every check then reads it as the origin form it names: `http://h/x/../metrics` is refused as
// `/x/../metrics` with `Host: h` would be. False, and nothing changed, for a target in any other form.
const absoluteForm = /^https?:\/\/([^/?#]*)(.*)$/is;
export function toOriginForm(req: IncomingMessage): boolean {
  const parts = absoluteForm.exec(req.url!);
  if (!parts) return false;
  req.headers.host = parts[1]!;
  req.url = parts[2]!.startsWith('/') ? parts[2]! : `/${parts[2]}`;
  return true;
}

// Yoga reads a body by its media type's exact spelling (`application/json`, then `;`), where type and subtype are
// case-insensitive and whitespace may stand before a parameter's `;` (RFC 9110 §8.3.1, §5.6.6): it is spelled so.
export function spellMediaType(req: IncomingMessage): void {
  const type = req.headers['content-type'];
  if (type === undefined || type === 'application/json') return;
  const at = type.indexOf(';');
  const media = at < 0 ? type : type.slice(0, at);
  const spelled = media.trim().toLowerCase();
  if (spelled !== media) req.headers['content-type'] = at < 0 ? spelled : spelled + type.slice(at);
}

// Yoga answers in the first type of `Accept` it can send (each range with its charset spelt `charset=utf-8`), and so
// does GraphiQL's page: a weight (RFC 9110 §12.4.2: `q=0` is "not acceptable", the highest goes first) or a quoted
// value (`charset="utf-8"`, the same as unquoted: §5.6.6) was not read. The header handed on lists the ranges by
// weight, those of weight 0 left out, each parameter unquoted. Clients send one Accept over and over: the last is kept.
let lastAccept = ['', ''];
export function rankAccept(req: IncomingMessage): void {
  const accept = req.headers.accept;
  if (accept === undefined || !/q=|"/i.test(accept)) return;
  if (lastAccept[0] !== accept) lastAccept = [accept, ranked(accept)];
  if (lastAccept[1] === '') delete req.headers.accept;
  else req.headers.accept = lastAccept[1];
}

function ranked(accept: string): string {
  const ranges = accept.split(',').map((range, at) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    let weight = 1;
    const kept = [type];
    for (const param of params) {
      const [name = '', ...rest] = param.split('=');
      const quoted = rest.join('=').trim();
      const value = /^".*"$/.test(quoted) ? quoted.slice(1, -1).replace(/\\(.)/g, '$1') : quoted;
      if (name.trim().toLowerCase() !== 'q') kept.push(`${name.trim()}=${value}`);
      else if (Number.isFinite(Number(value))) weight = Number(value);
    }
    return { text: type === '' ? '' : kept.join(';'), weight, at };
  });
  // Every range of weight 0: the header is disregarded (§12.5.1 lets a server do so), as if absent.
  const served = ranges.filter(({ text, weight }) => text !== '' && weight > 0);
  served.sort((a, b) => b.weight - a.weight || a.at - b.at);
  // Yoga serves GraphiQL's page wherever text/html is listed: only where nothing weighs more.
  const html = served.findIndex(({ text }) => /^text\/html(;|$)/i.test(text));
  if (html > 0 && served[html]!.weight < served[0]!.weight) served.splice(html, 1);
  return served.map(({ text }) => text).join(', ');
}

/** 411 or 413 when a request's body, whatever its method, is unknown in size or too big. */
export function bodyRefusal(req: IncomingMessage, maxBodyBytes: number): 411 | 413 | undefined {
  const length = req.headers['content-length'];
  // No declared length: only a chunked body can follow, of a size nobody knows yet.
  if (length === undefined) return req.headers['transfer-encoding'] ? 411 : undefined;
  return Number(length) > maxBodyBytes ? 413 : undefined;
}
