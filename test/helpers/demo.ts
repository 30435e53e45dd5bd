import { listenDemoService } from '../../src/demo/service.ts';
import { API_PREFIX } from '../../src/pim/rest/endpoints.ts';
import { startUpstream } from './upstream.ts';

/** Answer headers that belong to one connection, not to the answer a proxy passes on. */
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** The bundled demo REST service on its own loopback listener, as `npm start` runs it. */
export async function startDemo() {
  const demo = await listenDemoService();
  return {
    /** `http://127.0.0.1:<port>`: a base URL for the façade. */
    url: demo.url,
    /** GETs a path below the API prefix and parses the JSON body. */
    async get(path: string, init?: RequestInit) {
      const response = await fetch(`${demo.url}${API_PREFIX}${path}`, init);
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text };
    },
    close: demo.close,
  };
}

/**
 * The demo behind the recording upstream: real demo data, and every request (headers included)
 * recorded. Product searches wait for `release()` while `hold()` is on, so a test can see the
 * first part of a deferred response before the deferred part exists.
 */
export async function startDemoUpstream() {
  const demo = await startDemo();
  let held: Promise<void> | undefined;
  let release = () => {};
  const upstream = await startUpstream(async (req, res) => {
    if (held && req.url?.includes('/products/search')) await held;
    try {
      const response = await fetch(`${demo.url}${req.url}`);
      const headers = [...response.headers].filter(([name]) => !hopByHop.has(name));
      res.writeHead(response.status, Object.fromEntries(headers)).end(Buffer.from(await response.arrayBuffer()));
    } catch {
      res.destroy();
    }
  });
  return {
    ...upstream,
    hold() {
      held = new Promise((resolve) => (release = resolve));
    },
    release() {
      held = undefined;
      release();
    },
    async close() {
      await upstream.close();
      await demo.close();
    },
  };
}

export type DemoUpstream = Awaited<ReturnType<typeof startDemoUpstream>>;
