// What a process may give up when it runs out of file descriptors: a daemon's kept connections are held only to
// save reopening them, so an open that fails for want of a descriptor closes them and tries once more.

const releasers = new Set<() => number>();

/**
 * Registers what this process gives up when an open fails for want of a descriptor: release closes what it holds
 * and says how many it closed. The returned function unregisters it.
 */
export function onFilesExhausted(release: () => number): () => void {
  releasers.add(release);
  return () => {
    releasers.delete(release);
  };
}

/** Closes everything registered with onFilesExhausted; how many descriptors' holders were closed. */
export function releaseSpareFiles(): number {
  let n = 0;
  for (const release of releasers) n += release();
  return n;
}

/**
 * Whether err is an open that failed for want of a descriptor: EMFILE or ENFILE from Node, or SQLite's CANTOPEN
 * (which names no errno; retrying it after releasing something is harmless).
 */
export function isFilesExhausted(err: unknown): boolean {
  const e = err as { code?: unknown; errcode?: unknown; errstr?: unknown } | undefined;
  if (e?.code === 'EMFILE' || e?.code === 'ENFILE') return true;
  // node:sqlite's error: code ERR_SQLITE_ERROR, errcode the extended result code (CANTOPEN is 14).
  return e?.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' && (e.errcode & 0xff) === 14;
}

/**
 * Runs open, and when it fails for want of a descriptor while this process holds some it may give up (kept
 * connections), gives them up and runs it once more.
 */
export function withFileRoom<T>(open: () => T): T {
  try {
    return open();
  } catch (err) {
    if (!isFilesExhausted(err) || releaseSpareFiles() === 0) throw err;
    return open();
  }
}
