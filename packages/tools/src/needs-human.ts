import type { ArgsOf, Shape, ToolSpec } from './tool-spec.js';

/**
 * True when `err` is offshoot refusing an agent something its human may lift (by allowing it to force, or by
 * confirming this one call): `PROTECTED` with `humanCanAllow`, as the engine, the daemon (`human_can_allow`) and the
 * CLI's --json report it. A refusal no permission lifts, or a failure of any other kind, is not one.
 */
export function isLiftable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; humanCanAllow?: unknown };
  return e.code === 'PROTECTED' && e.humanCanAllow === true;
}

/** Whether the human may be asked about this call at all (a rollback; a promote or destroy that asks for force). */
export function confirmable<I extends Shape, O extends Shape>(spec: ToolSpec<I, O>, args: ArgsOf<I>): boolean {
  return spec.confirmable?.(args) === true;
}

/**
 * The one rule of whether a call needs the human: offshoot refuses it with a refusal the human may lift, and the
 * human may be asked about it (confirmable). Then the human is asked, and a yes runs that one call with force
 * allowed. `offshoot mcp -confirm-force` asks on the refusal itself; the AI SDK tools ask offshoot first, with a
 * check of the call that changes nothing.
 */
export function needsHuman<I extends Shape, O extends Shape>(
  spec: ToolSpec<I, O>,
  args: ArgsOf<I>,
  refusal: unknown,
): boolean {
  return confirmable(spec, args) && isLiftable(refusal);
}
