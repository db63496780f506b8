import { execFile } from 'node:child_process';
import { type ErrorCode, OffshootError } from './errors.js';
import { findOffshootBinary } from './testkit/find-binary.js';

/** How to run the at-rest `offshoot` CLI: the binary (default OFFSHOOT_BIN, else PATH) and the store. */
export interface CliTarget {
  bin?: string;
  store: string;
}

interface JsonError {
  error?: { code?: unknown; message?: unknown; hint?: unknown; retryable?: unknown; human_can_allow?: unknown };
}

function lastJsonLine(text: string): JsonError | undefined {
  const lines = text.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i] ?? '') as JsonError;
    } catch {
      // Warnings and notes are plain lines; the error is the JSON one.
    }
  }
  return undefined;
}

function cliError(args: string[], stderr: string, cause: unknown): OffshootError {
  const e = lastJsonLine(stderr)?.error;
  if (e !== undefined && typeof e.code === 'string' && typeof e.message === 'string') {
    return new OffshootError(e.code as ErrorCode, e.message, {
      ...(typeof e.hint === 'string' ? { hint: e.hint } : {}),
      retryable: e.retryable === true,
      humanCanAllow: e.human_can_allow === true,
    });
  }
  return new OffshootError('UNAVAILABLE', `offshoot ${args.join(' ')} failed: ${stderr.trim() || String(cause)}`, {
    hint: 'check that OFFSHOOT_BIN (or offshoot on PATH) is a working offshoot',
    cause,
  });
}

/**
 * Runs one at-rest verb of the `offshoot` CLI with `--json` (no daemon); resolves with its JSON document, rejects with
 * the CLI's error, code and hint. Global flags may go anywhere in `args`.
 */
export function runCli<T>(target: CliTarget, args: string[]): Promise<T> {
  const bin = findOffshootBinary(target.bin);
  const argv = ['-store', target.store, '--json', '--quiet', ...args];
  return new Promise((resolve, reject) => {
    execFile(bin, argv, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err !== null) {
        reject(cliError(args, stderr, err));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as T);
      } catch (parseErr) {
        reject(
          new OffshootError('BAD_RESPONSE', `offshoot ${args[0] ?? ''} printed no JSON document`, {
            hint: 'check that OFFSHOOT_BIN points at an offshoot of a matching version',
            cause: parseErr,
          }),
        );
      }
    });
  });
}
