import type { Reporter, TestModule } from 'vitest/node';
import './programs.ts';

/**
 * Ends a run with one line saying how many checks were skipped and why, so a machine without some
 * program passes yet says what it did not check: "skipped 6 checks: install redis-server (...) for 6".
 */
export default class SkippedSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const byReason = new Map<string, number>();
    // A failed hook skips the rest of its file: a failure already reported, not a skip.
    for (const module of modules.filter((module) => module.state() !== 'failed')) {
      for (const test of module.children.allTests('skipped')) {
        const result = test.result();
        const reason = test.meta().missing ?? (result.state === 'skipped' ? result.note : undefined);
        // Left out by a filter (-t) or marked .skip: the runner's own counts say so.
        if (reason === undefined) continue;
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
      }
    }
    if (byReason.size === 0) return;
    const total = [...byReason.values()].reduce((sum, count) => sum + count, 0);
    const reasons = [...byReason].map(([reason, count]) => `${reason} for ${count}`);
    process.stdout.write(`skipped ${total} check${total === 1 ? '' : 's'}: ${reasons.join('; ')}\n`);
  }
}
