/**
 * A call's argument refused by a tool before offshoot is asked, in the shape of offshoot's own errors (a stable
 * `code`, a `hint` in the agent's terms, not retryable), so each surface reports it as it reports offshoot's.
 */
export class ToolArgumentError extends Error {
  readonly code = 'INVALID_ARGUMENT';
  readonly retryable = false;
  readonly humanCanAllow = false;
  readonly hint: string;
  readonly hints: Record<string, string> = {};

  constructor(message: string, hint: string) {
    super(message);
    this.name = 'OffshootError';
    this.hint = hint;
  }
}
