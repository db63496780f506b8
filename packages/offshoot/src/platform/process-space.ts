import { readlinkSync } from 'node:fs';
import { hostName } from './host-name.js';

/**
 * Where this process's pid means something: the host name (or `$OFFSHOOT_HOST`, see hostName) plus, on Linux, the
 * pid namespace's inode. Containers can share a host name (host networking, `--uts=host`) while each has its own
 * pids, so the host name alone would let one container take another's live pid for a dead one. `-` where the
 * platform has no pid namespaces.
 */
export function processSpace(): string {
  space ??= readSpace();
  return space;
}

let space: string | undefined;

function readSpace(): string {
  let ns = '-';
  try {
    ns = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '-';
  } catch {
    // No /proc: a platform without pid namespaces, where the host name says it all.
  }
  return `${hostName()}:${ns}`;
}
