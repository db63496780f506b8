import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { asOffshootError, hintFor } from '../core/errors.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import { callDeps, type McpOptions } from './deps.js';
import { LOOP_RULES, LOOP_STEPS } from './loop-text.js';
import { registerLoopPrompt } from './prompt.js';
import type { Shape, ToolSpec } from './tool.js';
import { checkoutTool } from './tools/checkout.js';
import { checkpointTool } from './tools/checkpoint.js';
import { destroyTool } from './tools/destroy.js';
import { diffTool } from './tools/diff.js';
import { forkTool } from './tools/fork.js';
import { listTool } from './tools/list.js';
import { promoteTool } from './tools/promote.js';
import { queryTool } from './tools/query.js';
import { rollbackTool } from './tools/rollback.js';
import { touchTool } from './tools/touch.js';

/** Every tool, in the order hosts list them. */
export const TOOLS = [
  listTool,
  diffTool,
  queryTool,
  checkoutTool,
  forkTool,
  checkpointTool,
  touchTool,
  rollbackTool,
  promoteTool,
  destroyTool,
] as const;

/** The server-level instructions hosts may show the model. */
export const INSTRUCTIONS = `offshoot gives every attempt its own real SQLite database branch.\n${LOOP_STEPS}\n\n${LOOP_RULES}`;

/** A domain error as a tool result: its stable code, message and hint, never a transport error. */
export function errorResult(err: unknown): CallToolResult {
  const e = asOffshootError(err);
  const hint = hintFor(e, 'agent');
  return {
    isError: true,
    content: [{ type: 'text', text: `${e.code}: ${e.message}${hint ? `\nhint: ${hint}` : ''}` }],
    _meta: { 'offshoot/error': { code: e.code, message: e.message, hint: hint ?? null, retryable: e.retryable } },
  };
}

function register<I extends Shape, O extends Shape>(
  server: McpServer,
  spec: ToolSpec<I, O>,
  options: McpOptions,
  open: () => Promise<OpsContext>,
): void {
  server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: spec.input,
      outputSchema: spec.output,
      annotations: { title: spec.title, ...spec.annotations },
    },
    // The SDK has validated args against spec.input by now.
    (async (args: Parameters<ToolSpec<I, O>['run']>[0]): Promise<CallToolResult> => {
      const deps = callDeps(options, open);
      try {
        const out = await spec.run(args, deps);
        const notes = deps.notes.map((n) => `warning: ${n}`);
        return {
          content: [{ type: 'text', text: [out.text, ...notes].join('\n') }],
          structuredContent: out.structured as Record<string, unknown>,
        };
      } catch (err) {
        return errorResult(err);
      }
    }) as never,
  );
}

/** Builds an MCP server with the ten tools and the offshoot-loop prompt over one store opener. */
export function buildServer(options: McpOptions, open: () => Promise<OpsContext>, version: string): McpServer {
  const server = new McpServer({ name: 'offshoot', version }, { instructions: INSTRUCTIONS });
  for (const t of TOOLS) register(server, t as unknown as ToolSpec<Shape, Shape>, options, open);
  registerLoopPrompt(server);
  return server;
}
