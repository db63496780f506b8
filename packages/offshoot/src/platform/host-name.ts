import { hostname } from 'node:os';

/**
 * The name this machine goes by in lease holders, lock records and staging directories: `$OFFSHOOT_HOST` when set
 * (characters other than letters, digits, `.`, `_` and `-` become `-`), else the host name. It is for humans: which
 * records name this machine's processes is decided with the pid namespace and boot id as well (see processSpace).
 */
export function hostName(): string {
  const set = process.env.OFFSHOOT_HOST;
  if (set === undefined || set === '') return hostname();
  return set.replace(/[^A-Za-z0-9._-]/g, '-');
}
