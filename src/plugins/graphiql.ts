import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative } from 'node:path';
import { renderGraphiQL, type GraphiQLOptions, type Plugin } from 'graphql-yoga';

const header = `# X-API-KEY: put your PIM key in the Headers tab below, once: every tab whose key is empty uses it.
# Leave it empty for the demo catalog, or when the server sets PIM_API_KEY.
`;

const headers = JSON.stringify({ 'X-API-KEY': '' }, null, 2);

const tab = (query: string, variables: object) => ({
  query: `${header}${query}`,
  variables: JSON.stringify(variables, null, 2),
  headers,
});

const tabs = [
  tab(
    `query CatalogProducts($catalogId: ID!, $groupId: ID) {
  catalogProducts(catalogId: $catalogId, classificationGroupId: $groupId, languageId: "en", sorting: "+productId", pageSize: 3)
}`,
    { catalogId: 'MACHINERY', groupId: 'MC-050200' },
  ),
  tab(
    `query ClassificationGroup($classificationId: ID!, $groupId: ID!) {
  classificationGroup(classificationId: $classificationId, classificationGroupId: $groupId, levels: 1, languageId: "en")
}`,
    { classificationId: 'ECLASS-DEMO', groupId: 'MC-050000' },
  ),
  tab(
    `query ClassificationGroups($classificationId: ID!) {
  classificationGroups(classificationId: $classificationId, languageId: "en", pageSize: 5)
}`,
    { classificationId: 'ECLASS-DEMO' },
  ),
] as const;

/**
 * GraphiQL's tabs: one ready operation per field against the demo catalog, run with ▶. Which tab
 * opens, and the key they share, are settled in the page (graphiql-key.js).
 */
export const graphiqlOptions: GraphiQLOptions = {
  title: 'PIM catalog GraphQL',
  defaultTabs: [...tabs],
  defaultHeaders: headers,
};

const contentTypes: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css' };
/** Where GraphiQL's files are served: `/graphiql-assets/…`. */
export const GRAPHIQL_ASSETS_PATH = '/graphiql-assets';
// What Yoga's page would fetch from third-party origins: its scripts and styles (each URL up to its end: the tag's
// `>`, the string's `"`), and its favicon.
const cdn = /https:\/\/unpkg\.com\/@graphql-yoga\/graphiql@[^/]+\/dist(\/[^\s>"]+)/g;
const favicon = /<link rel=icon href=[^>]*>/;
const bundle = /<script src=[^>]*yoga-graphiql\.umd\.js[^>]*><\/script>/;
const missing = `<!doctype html><title>GraphiQL not installed</title>
<p>GraphiQL's files are not installed here: the package <code>@graphql-yoga/graphiql</code> is a development
dependency (the container image adds its prebuilt files). Run <code>npm install</code>, or POST queries to this URL.`;

/**
 * Serves GraphiQL's prebuilt scripts and styles from the installed @graphql-yoga/graphiql package
 * under `/graphiql-assets`, and points Yoga's page at them instead of a public CDN (no favicon):
 * the IDE then works offline and needs no third-party origin. Only the package's `dist` is used,
 * a self-contained bundle; without it (a production install) the page says how to get it.
 * The page names each file with the installed version (`?4.5.0`), as the CDN's URLs did: only such a URL is kept a
 * day, so an upgrade's page never runs against the bundle a browser or CDN kept from before; any other is revalidated.
 * Returns the plugin and the matching `renderGraphiQL`.
 */
export function createGraphiQLAssets() {
  const dist = findDist();
  const version: string | undefined =
    dist && JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')).version;
  // Only files present at startup are served, so no request path can reach outside dist.
  const files = new Set(
    dist
      ? readdirSync(dist, { recursive: true, encoding: 'utf8' }).map((file) => relative(dist, join(dist, file)))
      : [],
  );
  // The page's policy, worked out from the page itself: Yoga renders it the same for every request.
  let page = { html: '', policy: '' };
  const plugin: Plugin = {
    onResponse({ request, response }) {
      if (page.policy === '' || request.method !== 'GET' || response.headers.get('content-type') !== 'text/html')
        return;
      response.headers.set('content-security-policy', page.policy);
      response.headers.set('referrer-policy', 'no-referrer');
    },
    async onRequest({ url, endResponse, fetchAPI }) {
      if (!url.pathname.startsWith(`${GRAPHIQL_ASSETS_PATH}/`)) return;
      // Compared as sent: the packaged names need no escaping, and decoding could throw.
      const file = url.pathname.slice(GRAPHIQL_ASSETS_PATH.length + 1);
      const type = contentTypes[extname(file)];
      if (!dist || !files.has(file) || !type) return void endResponse(new fetchAPI.Response(null, { status: 404 }));
      const body = await readFile(join(dist, file));
      const cacheControl = url.search === `?${version}` ? 'public, max-age=86400' : 'no-cache';
      endResponse(new fetchAPI.Response(body, { headers: { 'content-type': type, 'cache-control': cacheControl } }));
    },
  };
  // Inlined right after the bundle, so it wraps the bundle's render before the page calls it.
  const keyScript = dist && `<script>${readFileSync(new URL('graphiql-key.js', import.meta.url), 'utf8')}</script>`;
  const render = (options: GraphiQLOptions) => {
    const html = renderPage(options);
    if (html !== page.html) page = { html, policy: policyOf(html) };
    return html;
  };
  const renderPage = (options: GraphiQLOptions) =>
    dist
      ? renderGraphiQL(options)
          .replaceAll(cdn, (_, file: string) => `${GRAPHIQL_ASSETS_PATH}${file}?${version}`)
          // Yoga fills in the first of the page's two title placeholders only (the other is "Loading …").
          .replaceAll('__TITLE__', options.title ?? '')
          .replace(favicon, '<link rel=icon href="data:,">')
          .replace(bundle, (tag) => `${tag}${keyScript}`)
      : missing;
  return { plugin, render };
}

const inlineScript = /<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g;

/**
 * The page's Content-Security-Policy: where the key is typed, only its own scripts run (the bundle from this server,
 * the inline ones Yoga's page and graphiql-key.js add, named by their hashes), it connects to this server alone, and
 * no other site may frame it. Monaco, GraphiQL's editor, adds styles inline and runs its workers from `blob:` URLs.
 */
function policyOf(html: string): string {
  const hashes = [...html.matchAll(inlineScript)].map(
    ([, body]) =>
      ` 'sha256-${createHash('sha256')
        .update(body ?? '')
        .digest('base64')}'`,
  );
  return [
    "default-src 'self'",
    `script-src 'self'${hashes.join('')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "worker-src 'self' blob:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function findDist(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return join(dirname(require.resolve('@graphql-yoga/graphiql/package.json')), 'dist');
  } catch (error) {
    // A production install leaves the development dependency out; anything else is a real fault.
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    return undefined;
  }
}
