// A foreign process holding a write transaction open on a checkout: the stock sqlite3 CLI reading its script from
// stdin, stopped between `BEGIN IMMEDIATE; INSERT …;` and its COMMIT.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { sqliteCode } from '../../src/sqlite/sqlite-result-codes.js';

/** A held write transaction; `commit()` finishes it and waits for the process to exit. */
export interface HeldWriter {
  commit(): Promise<void>;
  /** Kills the writer without committing (its insert is rolled back). */
  kill(): Promise<void>;
}

function writeLocked(file: string): boolean {
  const db = openDatabase(file, { timeout: 0, fileMustExist: true });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return false;
  } catch (err) {
    const code = sqliteCode(err);
    // The writer's first open of a checkout with no -shm rebuilds the wal-index: it holds no write lock yet.
    if (code === 'SQLITE_BUSY_RECOVERY') return false;
    if (code === 'SQLITE_BUSY') return true;
    throw err;
  } finally {
    db.close();
  }
}

/** Starts sqlite3 on file, runs `BEGIN IMMEDIATE` and `sql`, and returns once the write lock is visibly held. */
export async function holdWriteTransaction(file: string, sql: string): Promise<HeldWriter> {
  const child = spawn('sqlite3', ['-bail', '-cmd', '.timeout 5000', file], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit');
  child.stdin.write(`BEGIN IMMEDIATE;\n${sql}\n`);
  const deadline = Date.now() + 30_000;
  try {
    while (!writeLocked(file)) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`sqlite3 did not take the write lock: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } catch (err) {
    // A writer left running would keep the test file from ever ending.
    child.kill('SIGKILL');
    throw err;
  }
  return {
    commit: async () => {
      child.stdin.end('COMMIT;\n');
      const [code] = await exited;
      if (code !== 0) throw new Error(`sqlite3 writer exited ${code}: ${stderr}`);
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
