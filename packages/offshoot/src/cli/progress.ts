import type { ProgressSink } from '../ops/helpers/context.js';

/**
 * A progress-bar factory drawing on `stream`, or undefined when the stream is not a terminal (pipes, CI logs and
 * captured stderr stay clean). cli-progress is loaded only when a bar can actually be shown.
 */
export async function terminalProgress(stream: NodeJS.WriteStream): Promise<(() => ProgressSink) | undefined> {
  if (!stream.isTTY) return undefined;
  const { SingleBar } = await import('cli-progress');
  return () => {
    const bar = new SingleBar({
      stream,
      format: '{label} [{bar}] {percentage}% {value}/{total}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: true,
    });
    let running = false;
    return {
      start(label, total) {
        if (running) bar.stop();
        bar.start(total, 0, { label });
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
