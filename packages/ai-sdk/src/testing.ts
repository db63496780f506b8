// `@offshoot/ai-sdk/testing`: the AI SDK's own offline test model, scripted, so an agent's offshoot loop can be
// tested (and these docs' examples run) without a network model.
import { MockLanguageModelV4 } from 'ai/test';

/** One model turn: tool calls, which the SDK runs, or the final answer. */
export type Turn = { calls: Array<{ tool: string; input: unknown }> } | { text: string };

/** A turn fixed in advance, or one written from the output of the last tool result the model was given. */
export type ScriptedTurn = Turn | ((lastOutput: unknown) => Turn);

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** The value of the newest tool result in a prompt, as the model would read it. */
function lastToolOutput(prompt: ReadonlyArray<{ role: string; content: unknown }>): unknown {
  const tool = prompt.filter((m) => m.role === 'tool').at(-1);
  const parts = (Array.isArray(tool?.content) ? tool.content : []) as Array<{
    type: string;
    output?: { value?: unknown };
  }>;
  return parts.filter((p) => p.type === 'tool-result').at(-1)?.output?.value;
}

/**
 * A MockLanguageModelV4 (from `ai/test`) that plays `turns` in order, one per model call, and throws when asked for
 * more. It keeps the calls it was given in `doGenerateCalls`, so a test can check what the model was told.
 */
export function scriptedModel(turns: readonly ScriptedTurn[]): MockLanguageModelV4 {
  const queue = [...turns];
  let n = 0;
  return new MockLanguageModelV4({
    doGenerate: async (opts) => {
      const next = queue.shift();
      if (next === undefined) throw new Error('the scripted model has no turn left');
      const turn = typeof next === 'function' ? next(lastToolOutput(opts.prompt)) : next;
      const content =
        'text' in turn
          ? [{ type: 'text' as const, text: turn.text }]
          : turn.calls.map((c) => ({
              type: 'tool-call' as const,
              toolCallId: `call-${++n}`,
              toolName: c.tool,
              input: JSON.stringify(c.input),
            }));
      const unified = 'text' in turn ? ('stop' as const) : ('tool-calls' as const);
      return { content, finishReason: { unified, raw: undefined }, usage: USAGE, warnings: [] };
    },
  });
}
