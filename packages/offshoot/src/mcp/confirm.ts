import { createHash, randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { fail } from '../core/errors.js';

/** What a refused forced call would do, in the words the human is asked, and a fingerprint of the state it names. */
export interface Confirmation {
  /** One paragraph: the verb, the branch, its head txid, the undo point kept (or that none is). */
  message: string;
  /** The head txids (and undo point) the message names; the confirmed call runs only if they are unchanged. */
  fingerprint: string;
}

/** The human's answer a retried call carries: a yes, or a no with the reason. */
export type Answer = { question: Confirmation; yes: true } | { question: Confirmation; yes: false; why: string };

/** How long the human has to answer before the question counts as a refusal (and its signed state expires). */
export const CONFIRM_TIMEOUT_MS = 10 * 60_000;

/** The inputResponses key the answer comes back under. */
const ANSWER_KEY = 'confirm';

/** What the question's requestState carries, signed: the call it is about and the question as shown. */
interface Asked {
  tool: string;
  args: string;
  message: string;
  fingerprint: string;
}

/** A digest of a call's validated arguments: an answer counts only for the very call it was asked about. */
function digest(args: unknown): string {
  return createHash('sha256').update(JSON.stringify(args)).digest('base64url');
}

/** What a 2026-07-28 client declared for this request (its envelope; a 2025 client declares at initialize). */
export function clientCapabilities(ctx: ServerContext): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/** True when the client declared form elicitation (an empty `elicitation: {}` means form). */
export function canElicit(capabilities: { elicitation?: { form?: object } } | undefined): boolean {
  return capabilities?.elicitation?.form !== undefined;
}

/**
 * Questions to the host's human, the same way in both protocol eras: a question is an `input_required` result
 * holding one form elicitation and a requestState this process signed (HMAC, a key of its own, expiring with the
 * question). A 2026-07-28 client asks its human and retries the call with the answer; on a 2025-era connection the
 * SDK sends the elicitation itself and re-enters the call with the answer. Only a retry whose state verifies and
 * names this very call (tool and arguments) counts as an answer, so a client cannot answer a question never asked.
 */
export class Confirmations {
  readonly #codec = createRequestStateCodec<Asked>({ key: randomBytes(32), ttlSeconds: CONFIRM_TIMEOUT_MS / 1000 });

  /** The servers' `requestState.verify` hook: a state this process did not sign (or that expired) is refused. */
  readonly verify = (state: string, ctx: ServerContext): Promise<Asked> => this.#codec.verify(state, ctx);

  /** The input_required result that asks the human `question` about the call `tool(args)`. */
  async ask(tool: string, args: unknown, question: Confirmation): Promise<InputRequiredResult> {
    const state: Asked = { tool, args: digest(args), ...question };
    return inputRequired({
      inputRequests: {
        [ANSWER_KEY]: inputRequired.elicit({
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
        }),
      },
      requestState: await this.#codec.mint(state),
    });
  }

  /**
   * The answer a retried call carries, or undefined when the call is no answer to a question. Only an explicit
   * accept with `confirm: true` is a yes; a decline, a cancel, an unticked box or no answer at all is a no.
   */
  answer(tool: string, args: unknown, ctx: ServerContext): Answer | undefined {
    const asked = ctx.mcpReq.requestState<Asked>();
    if (asked === undefined) return undefined;
    if (typeof asked !== 'object' || asked.tool !== tool || asked.args !== digest(args))
      throw fail('INVALID_ARGUMENT', `this ${tool} call carries the answer to a question about another call`, {
        hint: 'make the call again as it was asked about, or afresh without the earlier answer',
      });
    const question = { message: asked.message, fingerprint: asked.fingerprint };
    const a = inputResponse(ctx.mcpReq.inputResponses, ANSWER_KEY);
    if (a.kind === 'elicit' && a.action === 'accept' && a.content?.['confirm'] === true) return { question, yes: true };
    if (a.kind !== 'elicit') return { question, yes: false, why: 'no answer came back from the human' };
    if (a.action === 'accept') return { question, yes: false, why: 'the human left "Allow this" unticked' };
    return {
      question,
      yes: false,
      why: a.action === 'decline' ? 'the human declined' : 'the human cancelled the question',
    };
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
