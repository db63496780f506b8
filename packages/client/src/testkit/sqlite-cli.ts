import { spawn } from 'node:child_process';
import { OffshootError } from '../errors.js';

/** The stock sqlite3 shell; the testkit drives databases through it so tests see exactly what a user's shell sees. */
const SQLITE3 = 'sqlite3';

function run(args: string[], input: string | undefined, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(SQLITE3, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.once('error', (e: NodeJS.ErrnoException) => {
      reject(
        e.code === 'ENOENT'
          ? new OffshootError('NOT_FOUND', `${what}: the sqlite3 shell is not on PATH`, {
              hint: 'install the sqlite3 command-line shell',
            })
          : e,
      );
    });
    child.once('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else {
        const msg = Buffer.concat(err).toString('utf8').trim();
        reject(
          new OffshootError('INVALID_ARGUMENT', `${what} failed (sqlite3 exit ${code}): ${msg}`, {
            hint: 'fix the SQL; sqlite3 stops at the first error',
          }),
        );
      }
    });
    if (input !== undefined) {
      // A shell that exits early (bad SQL) closes stdin; the exit code reports that, not EPIPE.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(input);
    }
  });
}

/** Runs SQL text against a database file, stopping at the first error. */
export async function runSql(dbPath: string, sql: string, what = 'SQL'): Promise<void> {
  await run(['-bail', '-cmd', '.timeout 5000', dbPath], sql, what);
}

/** The `sqlite3 .dump` text of a database: compare dumps, never bytes, since page layout differs between copies. */
export function dump(dbPath: string): Promise<string> {
  return run(['-readonly', dbPath, '.dump'], undefined, `dump ${dbPath}`);
}
