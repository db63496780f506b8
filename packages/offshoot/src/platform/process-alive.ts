/**
 * Whether a process with this pid exists in this pid namespace (EPERM means it does, under another user). Anything
 * but a positive int32 names no single process and reads as not alive.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid > 0x7fffffff) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
