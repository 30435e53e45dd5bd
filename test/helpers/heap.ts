import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Facade } from './facade.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap and array buffers in use once garbage is collected (a few rounds, for what finalizers free). */
export async function heapInUse(): Promise<number> {
  for (let i = 0; i < 4; i++) (gc(), await sleep(20));
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

/**
 * The heap a cache holds, in MiB: what `on` (the cache on) keeps after `read(on, 0, count)` beyond what `off` (the
 * same façade without it) keeps after the same reads. Each is warmed first with reads of its own (compiled code,
 * pools, the document) from 100,000 on.
 */
export async function heldByCache(
  read: (facade: Facade, from: number, count: number) => Promise<void>,
  { off, on }: { off: Facade; on: Facade },
  { count, warm }: { count: number; warm: { off: number; on: number } },
): Promise<number> {
  await read(off, 100_000, warm.off);
  await read(on, 100_000, warm.on);
  let start = await heapInUse();
  await read(off, 0, count);
  const without = (await heapInUse()) - start;
  start = await heapInUse();
  await read(on, 0, count);
  const held = (await heapInUse()) - start - without;
  console.log({ without, held: held / 2 ** 20 });
  return held / 2 ** 20;
}
