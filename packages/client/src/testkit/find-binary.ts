import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { OffshootError } from '../errors.js';

function isExecutableFile(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The offshoot binary to run: `explicit`, else OFFSHOOT_BIN, else `offshoot` on PATH. A bad explicit choice throws. */
export function findOffshootBinary(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? env['OFFSHOOT_BIN'];
  if (chosen !== undefined && chosen !== '') {
    if (!isExecutableFile(chosen)) {
      throw new OffshootError('NOT_FOUND', `offshoot binary ${chosen} is not an executable file`, {
        hint: 'point OFFSHOOT_BIN (or the bin option) at the offshoot executable',
      });
    }
    return chosen;
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir === '' ? '.' : dir, 'offshoot');
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new OffshootError('NOT_FOUND', 'offshoot is not on PATH', {
    hint: 'install offshoot, or set OFFSHOOT_BIN to its path',
  });
}
