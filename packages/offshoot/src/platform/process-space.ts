import { readlinkSync } from 'node:fs';
import { bootId } from './boot-id.js';
import { hostName } from './host-name.js';

/**
 * Where this process's pid means something: the host name (or `$OFFSHOOT_HOST`, see hostName) plus, on Linux, the
 * pid namespace's inode and the kernel's boot id. Containers can share a host name (host networking, `--uts=host`)
 * while each has its own pids, and every Linux machine's initial pid namespace has the same inode, so neither the
 * host name nor the inode alone would keep one machine from taking another's live pid for a dead one; the boot id
 * (random per boot) does. `-` where the platform has no pid namespaces.
 */
export function processSpace(): string {
  space ??= readSpace();
  return space;
}

let space: string | undefined;

function readSpace(): string {
  let ns = '-';
  try {
    const inode = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    if (inode !== undefined) ns = `${inode}.${shortBootId()}`;
  } catch {
    // No /proc: a platform without pid namespaces, where the host name says it all.
  }
  return `${hostName()}:${ns}`;
}

/** The first 12 hex digits of this boot's random id; `0` where the kernel does not expose one. */
function shortBootId(): string {
  return (bootId() ?? '').replace(/[^0-9a-f]/g, '').slice(0, 12) || '0';
}
