import { readFileSync } from 'node:fs';

let cached: string | null | undefined;

/**
 * The kernel's random id of this boot (Linux), or undefined where the platform exposes none: a file's data not yet
 * on the disk survives a process's death but not a new boot, and this tells the two apart.
 */
export function bootId(): string | undefined {
  if (cached === undefined) {
    try {
      cached = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cached = null;
    }
  }
  return cached ?? undefined;
}
