import { execFile } from 'node:child_process';
import { type ErrorCode, OffshootError } from './errors.js';
import { findOffshootBinary } from './testkit/find-binary.js';
import type { WireOrigin } from './types.js';

/**
 * How to run the at-rest `offshoot` CLI: the binary (default OFFSHOOT_BIN, else PATH), the store, and who asks for
 * the branch log (`sdk:typescript` unless `origin` says otherwise).
 */
export interface CliTarget {
  bin?: string;
  store: string;
  origin?: WireOrigin;
}

/** The surface a CLI run from this package names when its target names none. */
const DEFAULT_SURFACE = 'sdk:typescript';

/** The environment that tells the CLI who asks: OFFSHOOT_SURFACE and OFFSHOOT_ACTOR_META (`k=v,k=v`). */
function originEnv(origin: WireOrigin | undefined): NodeJS.ProcessEnv {
  const tags = Object.entries(origin?.meta ?? {});
  for (const [k, v] of tags)
    if (k.includes('=') || k.includes(',') || v.includes(','))
      throw new OffshootError('INVALID_ARGUMENT', `origin meta ${JSON.stringify(k)} cannot be passed to the CLI`, {
        hint: 'keep "=" and "," out of actor tag keys, and "," out of their values',
      });
  return {
    ...process.env,
    OFFSHOOT_SURFACE: origin?.surface ?? DEFAULT_SURFACE,
    OFFSHOOT_ACTOR_META: tags.map(([k, v]) => `${k}=${v}`).join(','),
  };
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
 * the CLI's error, code and hint. Global flags may go anywhere in `args`. An exit code in `answers` still answers with
 * the document it printed (a merge held by its conflicts, exit 9, prints them). `input` is written to its standard
 * input (a merge's `--resolve -`).
 */
export function runCli<T>(
  target: CliTarget,
  args: string[],
  opts: { answers?: readonly number[]; input?: string } = {},
): Promise<T> {
  const bin = findOffshootBinary(target.bin);
  const argv = ['-store', target.store, '--json', '--quiet', ...args];
  return new Promise((resolve, reject) => {
    // Inside the executor: a tag the CLI cannot be told rejects the call, as any other failure does.
    const env = originEnv(target.origin);
    const child = execFile(bin, argv, { maxBuffer: 64 << 20, env }, (err, stdout, stderr) => {
      if (err !== null && !(typeof err.code === 'number' && (opts.answers ?? []).includes(err.code) && stdout !== '')) {
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
    if (opts.input !== undefined) {
      // A CLI that refuses its flags exits without reading: its error is the answer, not the broken pipe.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(opts.input);
    }
  });
}
