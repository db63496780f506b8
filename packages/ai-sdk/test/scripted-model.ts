// Runs scripted turns of the AI SDK's offline test model (scriptedModel, from this package's testing entry) through
// the real generateText.
import { generateText, isStepCount, type ModelMessage, type ToolSet } from 'ai';
import { type ScriptedTurn, scriptedModel } from '../src/testing.js';

/** Runs `turns` through generateText with `tools`, continuing `messages` when given. */
export function run(tools: ToolSet, turns: ScriptedTurn[], messages?: ModelMessage[]) {
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
