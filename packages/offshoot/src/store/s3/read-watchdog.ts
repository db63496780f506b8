import type { Readable } from 'node:stream';

/**
 * Yields source's chunks, destroying source with onStall() when a requested chunk takes longer than idleMs to
 * arrive: a connection that stays open but stops delivering would otherwise hang a read forever. Only time spent
 * waiting on the source counts, so a slow consumer is never mistaken for a stalled connection. Stopping early
 * (error, stall or break) destroys the source.
 */
export async function* watchReads(source: Readable, idleMs: number, onStall: () => Error): AsyncGenerator<Buffer> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      // Destroying the source is what ends the wait: the pending next() then rejects with the stall error.
      const timer = setTimeout(() => source.destroy(onStall()), idleMs);
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } finally {
        clearTimeout(timer);
      }
      if (next.done === true) return;
      yield next.value;
    }
  } finally {
    source.destroy();
  }
}
