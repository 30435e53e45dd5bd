import { createDemoService } from '../../src/demo/service.ts';
import { startUpstream } from '../helpers/upstream.ts';

/**
 * The bundled demo catalog behind the recording upstream: real demo data, and every request
 * (headers included) recorded. Product searches wait for `release()` while `hold()` is on, so a
 * test can see the first part of a deferred response before the deferred part exists.
 */
export async function startDemoUpstream() {
  const demo = createDemoService();
  let held: Promise<void> | undefined;
  let release = () => {};
  const upstream = await startUpstream(async (req, res) => {
    if (held && req.url?.includes('/products/search')) await held;
    const response = await demo(new Request(`http://demo.test${req.url}`));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
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
  };
}
