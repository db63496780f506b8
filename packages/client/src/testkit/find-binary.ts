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
      const from = explicit === undefined ? `OFFSHOOT_BIN=${JSON.stringify(chosen)}` : `bin ${JSON.stringify(chosen)}`;
      throw new OffshootError('NOT_FOUND', `offshoot binary not found: ${from} is not an executable file`, {
        hint: 'point OFFSHOOT_BIN at the offshoot executable, or unset it to use `offshoot` on PATH',
      });
    }
    return chosen;
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir === '' ? '.' : dir, 'offshoot');
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new OffshootError(
    'NOT_FOUND',
    'offshoot binary not found: OFFSHOOT_BIN is not set and no `offshoot` is on PATH',
    {
      hint: 'set OFFSHOOT_BIN to the offshoot executable, or put `offshoot` on PATH',
    },
  );
}
