import { isOffshootError } from '@offshoot/client';
import { confirmable, needsHuman, type ArgsOf, type Shape, type ToolSpec } from '@offshoot/tools';
import type { ModelMessage } from 'ai';

/** Failures that say the check could not be made, not what offshoot would answer. */
const UNANSWERED = new Set(['CONNECTION_FAILED', 'CONNECTION_CLOSED', 'BAD_RESPONSE', 'UNAVAILABLE']);

/**
 * Whether this call needs the human, by the catalogue's one rule (the rule `offshoot mcp -confirm-force` applies):
 * a call the human may confirm that offshoot would refuse with a refusal the human may lift. Offshoot is asked with
 * a check of the call (`check`: one request, or one CLI run, that changes nothing), only for a confirmable call. A
 * check that could not be made asks; any other refusal does not (the call then fails with it, as it would anyway).
 */
export async function wouldNeedHuman<I extends Shape, O extends Shape>(
  spec: ToolSpec<I, O>,
  args: ArgsOf<I>,
  check: () => Promise<void>,
): Promise<boolean> {
  if (!confirmable(spec, args)) return false;
  try {
    await check();
    return false;
  } catch (err) {
    return needsHuman(spec, args, err) || !isOffshootError(err) || UNANSWERED.has(err.code);
  }
}

type Part = { type: string; toolCallId?: string; approvalId?: string; approved?: boolean; isAutomatic?: boolean };

function parts(m: ModelMessage): Part[] {
  return typeof m.content === 'string' ? [] : (m.content as Part[]);
}

/**
 * True when a human approved this very call: the messages it runs with hold the approval request for `toolCallId`
 * (not one the host's own configuration answered automatically) and an approving response to it. Only then does the
 * call run with force allowed, for itself alone, as a call the human confirmed under `offshoot mcp -confirm-force`.
 */
export function approvedByHuman(toolCallId: string, messages: readonly ModelMessage[]): boolean {
  const asked = messages
    .filter((m) => m.role === 'assistant')
    .flatMap(parts)
    .find((p) => p.type === 'tool-approval-request' && p.toolCallId === toolCallId && p.isAutomatic !== true);
  if (asked?.approvalId === undefined) return false;
  return messages
    .filter((m) => m.role === 'tool')
    .flatMap(parts)
    .some((p) => p.type === 'tool-approval-response' && p.approvalId === asked.approvalId && p.approved === true);
}
