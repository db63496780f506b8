/** Stable error codes: callers branch on these, never on messages or classes. */
export type ErrorCode =
  | 'USAGE'
  | 'INVALID_NAME'
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'NOT_INITIALIZED'
  | 'ALREADY_EXISTS'
  | 'CAS_CONFLICT'
  | 'BASE_MOVED'
  | 'MERGE_CONFLICT'
  | 'PROTECTED'
  | 'LEASE_HELD'
  | 'LEASE_LOST'
  | 'FENCED'
  | 'BUSY'
  | 'SESSION_OPEN'
  | 'CHECKSUM_MISMATCH'
  | 'CORRUPT'
  | 'LAYOUT_TOO_NEW'
  | 'SCHEMA_TOO_NEW'
  | 'UNSUPPORTED'
  | 'TIMEOUT'
  | 'TOO_LARGE'
  | 'UNAVAILABLE'
  | 'IO'
  | 'INTERNAL';

/** Who reads an error: a CLI user, an agent (the MCP server), or an SDK caller (the daemon's wire). */
export type Surface = 'cli' | 'agent' | 'sdk';

/** A hint written for the agent or the SDK caller, where the CLI's names a flag they do not have. */
export type SurfaceHints = Partial<Record<Exclude<Surface, 'cli'>, string>>;

/** Options accepted by every offshoot error. */
export interface ErrorOptions {
  /** The fix in the CLI user's terms (and everyone's, where no surface has its own). */
  hint?: string;
  /** The fix in an agent's or an SDK caller's terms, where it differs (no CLI flags). */
  hints?: SurfaceHints;
  retryable?: boolean;
  /** A refusal of the agent that its human may lift (-allow-force, or confirming the one call). */
  humanCanAllow?: boolean;
  cause?: unknown;
}

/** The one error type offshoot raises: a stable code, a message, and a hint naming the fix. */
export class OffshootError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  /** The hint per surface, where it differs from the CLI's. */
  readonly hints: SurfaceHints;
  readonly retryable: boolean;
  /** True when the agent was refused something its human may allow (-allow-force, or confirming this call). */
  readonly humanCanAllow: boolean;

  constructor(code: ErrorCode, message: string, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'OffshootError';
    this.code = code;
    this.hint = opts.hint;
    this.hints = opts.hints ?? {};
    this.retryable = opts.retryable ?? false;
    this.humanCanAllow = opts.humanCanAllow ?? false;
  }
}

/** The hint an error gives the surface that shows it: the surface's own, else the CLI's. */
export function hintFor(err: OffshootError, surface: Surface): string | undefined {
  return (surface === 'cli' ? undefined : err.hints?.[surface]) ?? err.hint;
}

/** Builds an OffshootError; shorthand used throughout the engine. */
export function fail(code: ErrorCode, message: string, opts?: ErrorOptions): OffshootError {
  return new OffshootError(code, message, opts);
}

/** True when err is an offshoot error carrying the given code (checked by code, not by class identity). */
export function hasCode(err: unknown, code: ErrorCode): err is OffshootError {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code && 'retryable' in err;
}

/** Wraps any thrown value as an OffshootError, keeping offshoot errors as they are. */
export function asOffshootError(err: unknown): OffshootError {
  if (err instanceof OffshootError) return err;
  if (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'string' &&
    'retryable' in err
  ) {
    return err as OffshootError;
  }
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string') {
    if (e.code === 'ENOENT') return fail('NOT_FOUND', e.message, { cause: err });
    if (e.code === 'EEXIST') return fail('ALREADY_EXISTS', e.message, { cause: err });
    if (e.code === 'EMFILE' || e.code === 'ENFILE') {
      return fail('UNAVAILABLE', `${e.message} (out of file descriptors)`, {
        retryable: true,
        hint: 'raise the open-file limit (ulimit -n); a daemon can also keep fewer checkouts open (serve -max-open)',
        cause: err,
      });
    }
    if (e.code === 'ENOSPC' || e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EIO' || e.code === 'EROFS') {
      return fail('IO', e.message, { cause: err });
    }
  }
  return fail('INTERNAL', err instanceof Error ? err.message : String(err), { cause: err });
}
