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

/** What is wrong with a chosen binary path, in the earlier testkit's words, or undefined when it is usable. */
function unusable(p: string): string | undefined {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 'does not exist';
  }
  if (!st.isFile()) return 'is not a file (is it a directory?)';
  return isExecutableFile(p) ? undefined : 'is not executable';
}

/** The offshoot binary to run: `explicit`, else OFFSHOOT_BIN, else `offshoot` on PATH. A bad explicit choice throws. */
export function findOffshootBinary(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? env['OFFSHOOT_BIN'];
  if (chosen !== undefined && chosen !== '') {
    const why = unusable(chosen);
    if (why !== undefined) {
      const from = explicit === undefined ? `OFFSHOOT_BIN=${JSON.stringify(chosen)}` : `bin ${JSON.stringify(chosen)}`;
      throw new OffshootError('NOT_FOUND', `offshoot binary not found: ${from} ${why}`, {
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
