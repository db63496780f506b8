import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ResourceLink,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { asOffshootError, hintFor } from '../core/errors.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import { askHuman, canElicit, confirmationStale, confirmedNote, notConfirmed } from './confirm.js';
import { callDeps, type McpDeps, type McpOptions } from './deps.js';
import { isGuardRefusal } from './guard.js';
import type { McpHub } from './hub.js';
import { LOOP_RULES, LOOP_STEPS } from './loop-text.js';
import { callControl } from './progress.js';
import { registerLoopPrompt } from './prompt.js';
import { branchUri, registerResources } from './resources.js';
import type { Shape, ToolOutcome, ToolSpec } from './tool.js';
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

/** Resource links per result at most (offshoot_list of a large store touches every branch). */
const MAX_LINKS = 50;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

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

function links(touched: ToolOutcome<Shape>['touched']): ResourceLink[] {
  const seen = new Set<string>();
  const out: ResourceLink[] = [];
  for (const { db, branch } of touched ?? []) {
    const uri = branchUri(db, branch);
    if (seen.has(uri) || out.length >= MAX_LINKS) continue;
    seen.add(uri);
    out.push({ type: 'resource_link', uri, name: `${db}@${branch}`, mimeType: 'application/json' });
  }
  return out;
}

function success(out: ToolOutcome<Shape>, deps: McpDeps): CallToolResult {
  const notes = deps.notes.map((n) => `warning: ${n}`);
  return {
    content: [{ type: 'text', text: [out.text, ...notes].join('\n') }, ...links(out.touched)],
    structuredContent: out.structured as Record<string, unknown>,
  };
}

/** Everything a tool call needs beyond its arguments: the options, the store, the hub and the client's server. */
interface CallScope {
  options: McpOptions;
  open: () => Promise<OpsContext>;
  hub: McpHub;
  server: McpServer;
}

/**
 * A call the safety policy refused, under -confirm-force: asks the host's human (when the client can be asked and
 * the call is one a human may confirm) and, on an explicit yes, runs it once more with force for that call alone,
 * provided the state the human was shown has not moved. Anything else is the original refusal or a new one.
 */
async function confirmAndRun(
  spec: ToolSpec<Shape, Shape>,
  args: Record<string, unknown>,
  refusal: unknown,
  scope: CallScope,
  extra: Extra,
): Promise<CallToolResult> {
  if (!canElicit(scope.server.server.getClientCapabilities()) || spec.confirm === undefined)
    return errorResult(refusal);
  const control = callControl(extra);
  const question = await spec.confirm(args as never, callDeps(scope.options, scope.open, control));
  if (question === undefined) return errorResult(refusal);
  scope.hub.log(`offshoot: mcp: asking the human: ${question.message}`, 'notice');
  const answer = await askHuman(extra, question);
  if (!answer.yes) {
    scope.hub.log(`offshoot: mcp: ${spec.name} not confirmed: ${answer.why}`, 'notice');
    return errorResult(notConfirmed(answer.why, question));
  }
  const deps = callDeps(scope.options, scope.open, control, true);
  const now = await spec.confirm(args as never, deps);
  if (now?.fingerprint !== question.fingerprint) return errorResult(confirmationStale());
  scope.hub.log(`offshoot: mcp: the human confirmed ${spec.name}: ${question.message}`, 'notice');
  const out = await spec.run(args as never, deps);
  await scope.hub.poke();
  return confirmedNote(success(out, deps));
}

function register(spec: ToolSpec<Shape, Shape>, scope: CallScope): void {
  scope.server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: spec.input,
      outputSchema: spec.output,
      annotations: { title: spec.title, ...spec.annotations },
    },
    // The SDK has validated args against spec.input by now.
    (async (args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> => {
      const deps = callDeps(scope.options, scope.open, callControl(extra));
      try {
        const out = await spec.run(args as never, deps);
        if (!spec.annotations.readOnlyHint) await scope.hub.poke();
        return success(out, deps);
      } catch (err) {
        if (!scope.options.confirmForce || !isGuardRefusal(err)) return errorResult(err);
        try {
          return await confirmAndRun(spec, args, err, scope, extra);
        } catch (again) {
          return errorResult(again);
        }
      }
    }) as never,
  );
}

/**
 * Builds an MCP server with the ten tools, the offshoot-loop prompt and the branch resources over one store opener,
 * attached to the hub that carries its logs and resource notifications.
 */
export function buildServer(
  options: McpOptions,
  open: () => Promise<OpsContext>,
  version: string,
  hub: McpHub,
): McpServer {
  const server = new McpServer({ name: 'offshoot', version }, { instructions: INSTRUCTIONS });
  const scope: CallScope = { options, open, hub, server };
  for (const t of TOOLS) register(t as unknown as ToolSpec<Shape, Shape>, scope);
  registerLoopPrompt(server);
  registerResources(server, open, () => hub.listed(server));
  hub.attach(server);
  return server;
}
