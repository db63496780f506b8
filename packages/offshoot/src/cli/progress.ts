import type { ProgressSink } from '../ops/context.js';

const MIB = 1024 * 1024;
const BAR_WIDTH = 30;

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * One progress line for a transfer of `total` bytes: `label [=====-----] 42% 12.0/28.5 MiB 3.1 MiB/s ETA 5s`. The
 * rate and ETA come from the average since the start; before anything moved the ETA is `--`.
 */
export function progressLine(label: string, done: number, total: number, elapsedMs: number): string {
  const fraction = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(fraction * BAR_WIDTH);
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
  const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
  return (
    `${label} [${'='.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${Math.floor(fraction * 100)}% ` +
    `${(done / MIB).toFixed(1)}/${(total / MIB).toFixed(1)} MiB ${(rate / MIB).toFixed(1)} MiB/s ETA ${clock(eta)}`
  );
}

/**
 * A progress-bar factory drawing on `stream`, or undefined when the stream is not a terminal (pipes, CI logs and
 * captured stderr stay clean). Totals are bytes. cli-progress is loaded only when a bar can actually be shown.
 */
export async function terminalProgress(stream: NodeJS.WriteStream): Promise<(() => ProgressSink) | undefined> {
  if (!stream.isTTY) return undefined;
  const { SingleBar } = await import('cli-progress');
  return () => {
    let label = '';
    const bar = new SingleBar({
      stream,
      format: (_options, params) =>
        progressLine(label, params.value, params.total, Date.now() - (params.startTime ?? Date.now())),
      hideCursor: true,
      clearOnComplete: true,
    });
    let running = false;
    return {
      start(text, total) {
        if (running) bar.stop();
        label = text;
        bar.start(total, 0);
        running = true;
      },
      update(done) {
        if (running) bar.update(done);
      },
      stop() {
        if (running) bar.stop();
        running = false;
      },
    };
  };
}
