// The torture's foreign client: the stock sqlite3 CLI, one process per step, writing the mixed script and reading
// `.dump`, the logical content every durability check compares.
import { execFile, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** The table every round writes. */
export const TORTURE_SCHEMA = 'CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER NOT NULL, body BLOB NOT NULL);';

/** Older rows are pruned first in every script, so each `.dump` stays bounded however long the run. */
const KEEP_ROWS = 600;

/** One loop of the mixed script: four transactions (insert, update 5 random rows, insert-select 3, delete 1). */
const LOOP = [
  'INSERT INTO t(n, body) VALUES (0, randomblob(200));',
  'UPDATE t SET n = n + 1 WHERE id IN (SELECT id FROM t ORDER BY random() LIMIT 5);',
  'INSERT INTO t(n, body) SELECT n, randomblob(200) FROM t ORDER BY random() LIMIT 3;',
  'DELETE FROM t WHERE id = (SELECT id FROM t ORDER BY random() LIMIT 1);',
].join('\n');

/**
 * The script of one writer process: a prune, then `loops` rounds of the four transactions, then (if dump) the
 * `.dump` of what it committed, which saves the round a second sqlite3 process when the writer is not killed.
 */
export function writerScript(loops: number, dump: boolean): string {
  return `.timeout 5000\nDELETE FROM t WHERE id <= (SELECT max(id) FROM t) - ${KEEP_ROWS};\n${`${LOOP}\n`.repeat(loops)}${dump ? '.dump\n' : ''}`;
}

/** How a writer process ended. */
export interface WriterOutcome {
  /** The SIGKILL landed while the script was still running. */
  killed: boolean;
  /** What sqlite3 printed on stdout: the `.dump` when the script ends with one and ran to the end. */
  stdout: string;
  /** What sqlite3 printed on stderr (a statement that failed, e.g. busy past its timeout). */
  stderr: string;
  ms: number;
}

/** Runs a script through one sqlite3 process on db; with killAfterMs it is SIGKILLed then, if still running. */
export function runWriter(db: string, script: string, killAfterMs?: number): Promise<WriterOutcome> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    // A killed writer stops reading its script: the pipe breaks, which is expected.
    child.stdin.on('error', () => undefined);
    child.once('error', reject);
    child.once('close', (_code, signal) => {
      clearTimeout(timer);
      resolve({ killed: signal === 'SIGKILL', stdout, stderr, ms: performance.now() - t0 });
    });
    child.stdin.end(script);
  });
}

/** Runs the sqlite3 CLI on file with stdin input; rejects on a failure or any stderr output. */
function sqlite3(file: string, args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'sqlite3',
      ['-bail', '-cmd', '.timeout 5000', file, ...args],
      { encoding: 'utf8', maxBuffer: 256 << 20 },
      (err, stdout, stderr) => {
        if (err || stderr !== '')
          reject(new Error(`sqlite3 ${file} ${args.join(' ')} failed (${err?.message ?? 'exit 0'}): ${stderr}`));
        else resolve(stdout);
      },
    );
    // sqlite3 need not read its input (a `.dump` argument): a closed pipe is expected then.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

/** The `.dump` of a database file through the sqlite3 CLI; fails loudly rather than return a partial dump. */
export function dumpOf(file: string): Promise<string> {
  return sqlite3(file, ['.dump'], '');
}

/** Runs SQL through the sqlite3 CLI, failing on the first error. */
export async function execSql(file: string, sql: string): Promise<void> {
  await sqlite3(file, [], sql);
}

/** A short description of how two dumps differ: rows missing from got, rows only in got. */
export function dumpDifference(want: string, got: string): string {
  const w = new Set(want.split('\n'));
  const g = new Set(got.split('\n'));
  const missing = [...w].filter((l) => !g.has(l));
  const extra = [...g].filter((l) => !w.has(l));
  const short = (l: string): string => (l.length > 90 ? `${l.slice(0, 90)}…` : l);
  return [
    `${missing.length} lines missing, ${extra.length} extra`,
    ...missing.slice(0, 3).map((l) => `  missing: ${short(l)}`),
    ...extra.slice(0, 3).map((l) => `  extra:   ${short(l)}`),
  ].join('\n');
}
