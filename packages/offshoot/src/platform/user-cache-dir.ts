import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Go's os.UserCacheDir, which the original used for per-user state: $XDG_CACHE_HOME (absolute only), else
 * ~/Library/Caches on macOS, else ~/.cache.
 */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg?.startsWith('/')) return xdg;
  const home = env.HOME || homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Caches');
  return join(home, '.cache');
}
