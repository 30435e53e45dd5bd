import { expect, it, onTestFinished } from 'vitest';
import { startFacade } from '../helpers/facade.ts';
import { startUpstream } from '../helpers/upstream.ts';

// docs/operations.md, Monitoring: `otel_spans_unexported_total` counts the spans missing from the traces. While the
// collector is slow, the SDK's batch processor sends one batch at a time and dropped every span past its queue
// (OTEL_BSP_MAX_QUEUE_SIZE, 2048) before it reached the exporter, telling only OTel's diagnostic logger (unset): those
// spans were missing from the traces and from the count. The SDK's own settings make the queue small here.
it('counts the spans dropped for want of room while the collector is slow to refuse', async () => {
  const settings = {
    OTEL_BSP_MAX_QUEUE_SIZE: '8',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  const saved = Object.keys(settings).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, settings);
  onTestFinished(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  // Refuses every batch (400: the exporter does not retry it) after 300 ms.
  const collector = await startUpstream((_req, res) => {
    const timer = setTimeout(() => res.writeHead(400).end(), 300);
    res.once('close', () => clearTimeout(timer));
  });
  onTestFinished(() => collector.close());
  const upstream = await startUpstream();
  onTestFinished(() => upstream.close());
  const facade = await startFacade(upstream.url, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, PIM_CACHE: 'false' });
  onTestFinished(() => facade.close());

  for (let i = 0; i < 6; i++) {
    const { status } = await facade.post(
      `{ a: catalogProducts(catalogId: "C${i}") b: classificationGroups(classificationId: "K${i}") }`,
    );
    expect(status).toBe(200);
  }
  // One server span per operation, one client span per upstream call; none reached the collector's traces.
  expect(upstream.requests).toHaveLength(12);
  const unexported = async () =>
    Number(/^otel_spans_unexported_total (\d+)$/m.exec((await facade.get('/metrics')).text)?.[1]);
  await expect.poll(unexported, { timeout: 10_000 }).toBe(18);
  // More than one batch was refused, and more spans went missing than the refused batches held: some were dropped.
  expect(collector.requests.length).toBeGreaterThan(1);
  expect(collector.requests.length * 4).toBeLessThan(18);
}, 20_000);
