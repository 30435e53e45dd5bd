import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { API_PREFIX } from '../pim/rest/endpoints.ts';
import { loadDemoData, type DemoIndex } from './data.ts';
import { BadRequestError, fail, toResponse, type Reply } from './envelope.ts';
import { listGroups, readGroup } from './groups.ts';
import { searchProducts } from './products.ts';

const PREFIX = API_PREFIX.split('/').slice(1);

/** Decodes each segment on its own, so an id `a/b` sent as `a%2Fb` stays one segment. */
function segments(pathname: string): string[] | undefined {
  try {
    return pathname.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

function route(data: DemoIndex, url: URL, path: string[]): Reply | undefined {
  const query = url.searchParams;
  const [resource, id, sub, subId, extra] = path;
  if (id === undefined || extra !== undefined) return undefined;
  if (resource === 'catalogs' && sub === 'products' && subId === 'search') return searchProducts(data, id, query);
  if (resource !== 'classifications' || sub !== 'groups') return undefined;
  return subId === undefined ? listGroups(data, id, url) : readGroup(data, id, subId, query);
}

/** A WHATWG fetch handler serving the three demo REST operations under /pxm/pimapi/v1. */
export function createDemoService(): (request: Request) => Promise<Response> | Response {
  const data = loadDemoData();
  return (request) => {
    const url = new URL(request.url);
    const languageId = url.searchParams.get('languageId');
    const path = segments(url.pathname);
    const reply = ((): Reply => {
      if (!path || PREFIX.some((p, i) => path[i] !== p)) return fail(404, languageId, `No resource at ${url.pathname}`);
      const rest = path.slice(PREFIX.length);
      if (request.method !== 'GET') return fail(405, languageId, `Method ${request.method} not allowed; use GET`);
      try {
        return route(data, url, rest) ?? fail(404, languageId, `No resource at ${url.pathname}`);
      } catch (error) {
        if (error instanceof BadRequestError) return fail(400, languageId, error.message);
        throw error;
      }
    })();
    return toResponse(reply, request);
  };
}

/** A running demo service: its base URL (for PIM_BASE_URL) and how to stop it. */
export interface DemoListener {
  url: string;
  close(): Promise<void>;
}

/** Serves the demo on a loopback listener of its own, on a free port: never reachable from outside. */
export async function listenDemoService(): Promise<DemoListener> {
  const server = createServer(createServerAdapter(createDemoService()));
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The façade's pool may still hold idle keep-alive connections to it.
        server.closeAllConnections();
      }),
  };
}
