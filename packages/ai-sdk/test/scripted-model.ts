// The AI SDK's own offline test model (MockLanguageModelV4 from `ai/test`), scripted turn by turn: a turn calls
// tools or answers with text. The model keeps the prompts it was given (doGenerateCalls), so a test can check what
// the model was told.
import { generateText, isStepCount, type ModelMessage, type ToolSet } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

/** One model turn: tool calls (run by the SDK) or a final answer. */
export type Turn = { calls: Array<{ tool: string; input: unknown }> } | { text: string };

/** A turn fixed in advance, or one written from the output of the last tool result the model was given. */
export type Script = Turn | ((lastOutput: unknown) => Turn);

/** The value of the newest tool result in a prompt, as a model would read it. */
function lastToolOutput(prompt: Array<{ role: string; content: unknown }>): unknown {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i];
    if (m?.role !== 'tool' || !Array.isArray(m.content)) continue;
    const parts = m.content as Array<{ type: string; output?: { value?: unknown } }>;
    const last = parts.filter((p) => p.type === 'tool-result').at(-1);
    if (last !== undefined) return last.output?.value;
  }
  return undefined;
}

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model that plays `turns` in order and fails the test if asked for more. */
export function scriptedModel(turns: Script[]): MockLanguageModelV4 {
  const queue = [...turns];
  let n = 0;
  return new MockLanguageModelV4({
    doGenerate: async (opts) => {
      const next = queue.shift();
      if (next === undefined) throw new Error('the scripted model ran out of turns');
      const turn = typeof next === 'function' ? next(lastToolOutput(opts.prompt)) : next;
      if ('text' in turn)
        return {
          content: [{ type: 'text', text: turn.text }],
          finishReason: { unified: 'stop', raw: undefined },
          usage: USAGE,
          warnings: [],
        };
      return {
        content: turn.calls.map((c) => ({
          type: 'tool-call' as const,
          toolCallId: `call-${++n}`,
          toolName: c.tool,
          input: JSON.stringify(c.input),
        })),
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}

/** Runs `turns` through generateText with `tools`, continuing `messages` when given. */
export function run(tools: ToolSet, turns: Script[], messages?: ModelMessage[]) {
  const model = scriptedModel(turns);
  const base = { model, tools, stopWhen: isStepCount(10) };
  const result =
    messages === undefined
      ? generateText({ ...base, prompt: 'work on the database' })
      : generateText({ ...base, messages });
  return result.then((r) => Object.assign(r, { model }));
}

/** One tool call and a closing answer: the step's content (a tool-result, tool-error or tool-approval-request). */
export async function callOnce(tools: ToolSet, tool: string, input: unknown) {
  const r = await run(tools, [{ calls: [{ tool, input }] }, { text: 'done' }]);
  const first = r.steps[0];
  if (first === undefined) throw new Error('no step ran');
  return { result: r, content: first.content.filter((c) => c.type !== 'tool-call') };
}
