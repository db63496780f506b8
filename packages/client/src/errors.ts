/** Error codes the daemon sends; the same codes the offshoot CLI and engine use (a test keeps them identical). */
export const DAEMON_ERROR_CODES = [
  'USAGE',
  'INVALID_NAME',
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'NOT_INITIALIZED',
  'ALREADY_EXISTS',
  'CAS_CONFLICT',
  'BASE_MOVED',
  'MERGE_CONFLICT',
  'PROTECTED',
  'LEASE_HELD',
  'LEASE_LOST',
  'FENCED',
  'BUSY',
  'SESSION_OPEN',
  'CHECKSUM_MISMATCH',
  'CORRUPT',
  'LAYOUT_TOO_NEW',
  'SCHEMA_TOO_NEW',
  'UNSUPPORTED',
  'TIMEOUT',
  'TOO_LARGE',
  'UNAVAILABLE',
  'IO',
  'INTERNAL',
] as const;

/** One error code the daemon sends. */
export type DaemonErrorCode = (typeof DAEMON_ERROR_CODES)[number];

/**
 * Codes raised by the client itself: the daemon could not be reached, it hung up (or this client was closed) before
 * answering, or it answered something that is not the protocol.
 */
export type ClientErrorCode = 'CONNECTION_FAILED' | 'CONNECTION_CLOSED' | 'BAD_RESPONSE';

/** Every code an OffshootError from this package can carry. */
export type ErrorCode = DaemonErrorCode | ClientErrorCode;

/** Options of an OffshootError. */
export interface OffshootErrorOptions {
  hint?: string;
  /** The hint in an agent's terms (behind `offshoot mcp`), where it differs from `hint`. */
  hints?: { agent?: string };
  retryable?: boolean;
  /** A refusal of an agent that its human may lift. */
  humanCanAllow?: boolean;
  cause?: unknown;
}

/** The one error type the client throws: a stable `code` to branch on, a message, and a `hint` naming the fix. */
export class OffshootError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  /** The hint in an agent's terms (behind `offshoot mcp`), where the daemon sent one that differs from `hint`. */
  readonly hints: { agent?: string };
  readonly retryable: boolean;
  /** True when the daemon refused an agent something its human may allow (`human_can_allow`). */
  readonly humanCanAllow: boolean;

  /** `new OffshootError(message)` (the earlier client's form) carries the code INTERNAL. */
  constructor(message: string);
  constructor(code: ErrorCode, message: string, opts?: OffshootErrorOptions);
  constructor(codeOrMessage: string, message?: string, opts: OffshootErrorOptions = {}) {
    super(message ?? codeOrMessage, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'OffshootError';
    this.code = message === undefined ? 'INTERNAL' : (codeOrMessage as ErrorCode);
    this.hint = opts.hint;
    this.hints = opts.hints ?? {};
    this.retryable = opts.retryable ?? false;
    this.humanCanAllow = opts.humanCanAllow ?? false;
  }
}

/**
 * True when `err` is an offshoot error, optionally with the given code. It checks the shape rather than the class,
 * so errors from another copy of this package (or from the engine) qualify too.
 */
export function isOffshootError(err: unknown, code?: ErrorCode): err is OffshootError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; retryable?: unknown };
  return typeof e.code === 'string' && typeof e.retryable === 'boolean' && (code === undefined || e.code === code);
}
