import {
  type CallToolResult,
  ElicitResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { fail } from '../core/errors.js';

/** What a refused forced call would do, in the words the human is asked, and a fingerprint of the state it names. */
export interface Confirmation {
  /** One paragraph: the verb, the branch, its head txid, the undo point kept (or that none is). */
  message: string;
  /** The head txids (and undo point) the message names; the confirmed call runs only if they are unchanged. */
  fingerprint: string;
}

/** How long the human has to answer before the question counts as a refusal. */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** True when the client declared form elicitation (an empty `elicitation: {}` means form). */
export function canElicit(capabilities: { elicitation?: { form?: object } } | undefined): boolean {
  return capabilities?.elicitation?.form !== undefined;
}

/**
 * Asks the host's human, through a form elicitation on this call's own request, whether `question` may go ahead.
 * Only an explicit accept with `confirm: true` is a yes; a decline, a cancel, a timeout, a cancelled call or any
 * error is a no, and the reason comes back for the refusal.
 */
export async function askHuman(
  extra: Extra,
  question: Confirmation,
): Promise<{ yes: true } | { yes: false; why: string }> {
  try {
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: question.message,
          requestedSchema: {
            type: 'object',
            properties: {
              confirm: {
                type: 'boolean',
                title: 'Allow this',
                description:
                  'Tick to let the agent do exactly this, once. Leave it unticked, decline or cancel to refuse.',
                default: false,
              },
            },
            required: ['confirm'],
          },
        },
      },
      ElicitResultSchema,
      { timeout: CONFIRM_TIMEOUT_MS, signal: extra.signal },
    );
    if (answer.action === 'accept' && answer.content?.['confirm'] === true) return { yes: true };
    if (answer.action === 'accept') return { yes: false, why: 'the human left "Allow this" unticked' };
    return { yes: false, why: answer.action === 'decline' ? 'the human declined' : 'the human cancelled the question' };
  } catch (err) {
    return { yes: false, why: `the question to the human failed (${(err as Error).message})` };
  }
}

/** The refusal after a question the human did not answer yes to: still PROTECTED, naming why. */
export function notConfirmed(why: string, question: Confirmation): Error {
  return fail('PROTECTED', `not confirmed: ${why}; nothing was changed. Asked: ${question.message}`, {
    hint: 'do not retry this call; tell the human what you wanted to do and let them decide',
  });
}

/** The refusal when what the human confirmed changed before the call ran again. */
export function confirmationStale(): Error {
  return fail('CAS_CONFLICT', 'the branch changed while the human was being asked; nothing was changed', {
    retryable: true,
    hint: 'look again (offshoot_list) and, if it still makes sense, make the call again: the human is asked anew',
  });
}

/** Marks a result as one the human confirmed, so a harness can tell. */
export function confirmedNote(result: CallToolResult): CallToolResult {
  return { ...result, _meta: { ...result._meta, 'offshoot/confirmed-by-human': true } };
}
