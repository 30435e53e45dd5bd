import { pino, symbols, type Logger } from 'pino';

/** Paths pino blanks out wherever they appear in a log line: credentials never reach the log. */
const redact = [
  '*.headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
];

// Lines wait in memory while stdout takes none (a stalled log collector). Past this many bytes a line is
// dropped and counted (`log_lines_dropped_total`) rather than held until the heap runs out: about
// 40,000 request lines, 8 s of them at 5,000 requests a second.
export const MAX_WAITING_LOG_BYTES = 8 * 1024 * 1024;
let droppedLines = 0;

/** Lines this process's loggers dropped because stdout did not keep up; read at each scrape. */
export const droppedLogLines = () => droppedLines;

export interface LoggerOptions {
  pretty?: boolean;
  /**
   * Where the JSON lines go. Unset: stdout, through `process.stdout`, which makes a pipe non-blocking,
   * so a write to a stalled log collector is retried rather than holding a libuv thread.
   */
  fd?: number;
}

/**
 * The process-wide logger, on stdout: JSON lines, buffered up to 4 KB and written asynchronously,
 * at the latest a second later, and flushed synchronously when the process exits. With `pretty`
 * (development) at a terminal, lines a person reads instead, through pino-pretty where installed.
 */
export function createLogger(level: string, { pretty = false, fd }: LoggerOptions = {}): Logger {
  const options = { level, redact: { paths: redact, censor: '[redacted]' } };
  // pino-pretty is a development dependency: a production install has none, and logs JSON.
  if (pretty && process.stdout.isTTY && isInstalled('pino-pretty')) {
    return pino({ ...options, transport: { target: 'pino-pretty' } });
  }
  // One write per request line was a syscall and a thread-pool hop each: most of the log line's cost.
  // sonic-boom's own periodic flush passes no callback, so it adds no listener: a callback would wait
  // for 'drain', which a stream busy for ten seconds never emits (Node then warns of a leak).
  const destination = pino.destination({
    dest: fd ?? process.stdout.fd,
    sync: false,
    minLength: 4_096,
    // One write is under way at a time, and the next starts in a later turn of the event loop: at sonic-boom's
    // 16 KB a write, a loaded process logged more in a turn than it wrote, and dropped lines a fast file would take.
    maxWrite: 65_536,
    periodicFlush: 1_000,
    maxLength: MAX_WAITING_LOG_BYTES,
    // Lines wait as bytes, each in a list: as text, every line logged while a write was under way joined the chunk
    // behind it, which sonic-boom then measured (copied) whole, some 5 µs a line under load.
    contentMode: 'buffer',
  });
  // In buffer mode sonic-boom takes bytes, which pino (writing text) does not know.
  const write = destination.write.bind(destination) as unknown as (line: Buffer) => boolean;
  destination.write = (line: string) => write(Buffer.from(line));
  destination.on('drop', () => void droppedLines++);
  return pino(options, destination);
}

type Destination = ReturnType<typeof pino.destination> & { destroyed?: boolean };

/**
 * Writes every line still waiting and ends the destination, giving up on the rest after `timeoutMs`:
 * call it before `process.exit`. pino's own flush at exit retries a stdout that takes nothing (a stalled
 * log collector) for ever, and the process with it; an ended destination is skipped there. Not `flush`:
 * its callback comes once at most 4 KB are left, and those were then written at exit.
 */
export function endLogs(logger: Logger, timeoutMs: number): Promise<void> {
  const destination = (logger as unknown as Record<symbol, unknown>)[symbols.streamSym] as Destination;
  // pino-pretty's worker (development at a terminal) ends with its own thread; a second call finds it ended.
  if (!('minLength' in destination) || destination.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    // Resolved at the bound whatever the destination does: once stdout met EPIPE (its reader gone), pino makes `end`
    // and `destroy` do nothing, and no 'close' ever comes.
    const timer = setTimeout(() => (destination.destroy(), resolve()), timeoutMs);
    destination.once('close', () => (clearTimeout(timer), resolve()));
    destination.end();
  });
}

function isInstalled(name: string): boolean {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the `msg` lines of `logger` at `level` whose fields are plain JSON data (strings, numbers, arrays of them;
 * nothing to redact or serialize): the line `logger[level](fields, msg)` writes, framed by the logger itself (level,
 * time, bindings, end of line) around the fields written by one `JSON.stringify`. pino's serializer walks a line's
 * fields one by one: on the request line, a twentieth of a response-cache hit. A logger with a mixin, formatter,
 * hook, nested key or message prefix (none here, but a caller may pass one) gets its own method.
 */
export function plainLines(logger: Logger, level: 'info', msg: string): (fields: object) => void {
  const own = logger as unknown as Record<symbol, unknown>;
  const formatters = own[symbols.formattersSym] as { log?: unknown };
  const hooks = own[symbols.hooksSym] as { logMethod?: unknown; streamWrite?: unknown };
  const stream = own[symbols.streamSym] as { write(line: string): unknown; [key: symbol]: unknown };
  const plain =
    !own[symbols.mixinSym] &&
    !formatters.log &&
    !hooks.logMethod &&
    !hooks.streamWrite &&
    !own[symbols.nestedKeySym] &&
    logger.msgPrefix === undefined &&
    stream[symbols.needsMetadataGsym] !== true;
  if (!plain) return (fields) => logger[level](fields, msg);
  const head = (own[symbols.lsCacheSym] as Record<number, string>)[logger.levels.values[level]!]!;
  const time = own[symbols.timeSym] as () => string;
  const tail = `,"${own[symbols.messageKeySym] as string}":${JSON.stringify(msg)}${own[symbols.endSym] as string}`;
  return (fields) => {
    if (!logger.isLevelEnabled(level)) return;
    const json = JSON.stringify(fields);
    const props = json.length > 2 ? `,${json.slice(1, -1)}` : '';
    stream.write(head + time() + (own[symbols.chindingsSym] as string) + props + tail);
  };
}
