import { hasCode } from '../core/errors.js';
import { type AgentAction, guardAgentAction } from '../ops/helpers/safety/agent-guard.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import type { McpDeps } from './deps.js';

const refusals = new WeakSet<object>();

/** True when err is the safety policy refusing a protected branch (not a storage hiccup): a human may confirm it. */
export function isGuardRefusal(err: unknown): boolean {
  return typeof err === 'object' && err !== null && refusals.has(err);
}

/**
 * The one place the MCP tools ask the safety policy whether the agent may do `action`: the policy is the human's
 * -allow-force, or, on the second run of a call the host's human confirmed (-confirm-force), force for that call
 * alone. Returns the force the verb may use; a refusal throws PROTECTED or LEASE_HELD with a hint.
 */
export async function guardAgent(ctx: OpsContext, action: AgentAction, deps: McpDeps): Promise<{ force: boolean }> {
  if (deps.confirmed) {
    const forced = action.verb === 'promote' || action.verb === 'destroy' ? { ...action, force: true } : action;
    return guardAgentAction(ctx, forced, { allowForce: true });
  }
  try {
    return await guardAgentAction(ctx, action, { allowForce: deps.options.allowForce });
  } catch (err) {
    if (hasCode(err, 'PROTECTED') && !err.retryable) refusals.add(err);
    throw err;
  }
}
