import { hostname } from 'node:os';

/**
 * The name this machine goes by in lease holders, lock records and staging directories: `$OFFSHOOT_HOST` when set
 * (characters other than letters, digits, `.`, `_` and `-` become `-`), else the host name. A record of this name and
 * pid namespace whose pid is gone is taken for a dead process here, so machines that share a host name (cloned VMs,
 * containers on the host's pid namespace) must each set their own.
 */
export function hostName(): string {
  const set = process.env.OFFSHOOT_HOST;
  if (set === undefined || set === '') return hostname();
  return set.replace(/[^A-Za-z0-9._-]/g, '-');
}
