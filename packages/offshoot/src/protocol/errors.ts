import { asOffshootError, hintFor } from '../core/errors.js';
import type { Response } from './wire.js';

/**
 * Renders an error as a wire response: the message (prefixed `daemon: ` as clients expect) plus code and hint, and,
 * additively, whether an agent's human may lift the refusal and the hint in the terms of an agent behind
 * `offshoot mcp` where it differs (so the MCP server relays the refusal the agent gets at rest, word for word).
 */
export function errorResponse(err: unknown): Response {
  const e = asOffshootError(err);
  const res: Response = { ok: false, error: `daemon: ${e.message}`, code: e.code, retryable: e.retryable };
  const hint = hintFor(e, 'sdk');
  if (hint !== undefined) res.hint = hint;
  const agentHint = hintFor(e, 'agent');
  if (agentHint !== undefined && agentHint !== hint) res.agent_hint = agentHint;
  if (e.humanCanAllow) res.human_can_allow = true;
  return res;
}
