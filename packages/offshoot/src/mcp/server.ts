import {
  type CallToolResult,
  type InputRequiredResult,
  type LoggingLevel,
  McpServer,
  type ResourceLink,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  needsHuman,
  type Shape,
  type ToolCatalogue,
  type ToolName,
  type ToolSpec,
  toolCatalogue,
} from '@offshoot/tools';
import { z } from 'zod';
import { asOffshootError, hintFor } from '../core/errors.js';
import type { OpsContext } from '../ops/context.js';
import {
  type Answer,
  CONFIRM_TIMEOUT_MS,
  canElicit,
  clientCapabilities,
  type Confirmations,
  confirmationStale,
  confirmedNote,
  notConfirmed,
} from './confirm.js';
import type { DaemonLinks } from './daemon/daemon-links.js';
import { ttlText } from './args.js';
import { callDeps, type McpDeps, type McpOptions } from './deps.js';
import type { McpHub } from './hub.js';
import { LOOP_RULES, LOOP_STEPS } from './loop-text.js';
import { callControl } from './progress.js';
import { registerLoopPrompt } from './prompt.js';
import { branchUri, registerResources } from './resources.js';
import type { ToolOutcome, ToolRun } from './tool.js';
import { toolInput } from './tool-input.js';
import { checkoutRun } from './tools/checkout.js';
import { checkpointRun } from './tools/checkpoint.js';
import { destroyRun } from './tools/destroy.js';
import { diffRun } from './tools/diff.js';
import { forkRun } from './tools/fork.js';
import { listRun } from './tools/list.js';
import { logRun } from './tools/log.js';
import { mergeRun } from './tools/merge.js';
import { promoteRun } from './tools/promote.js';
import { queryRun } from './tools/query.js';
import { rollbackRun } from './tools/rollback.js';
import { touchRun } from './tools/touch.js';

/** How this server runs each tool of the catalogue. */
const RUNS: { [K in ToolName]: ToolRun<ToolCatalogue[K]> } = {
  offshoot_list: listRun,
  offshoot_diff: diffRun,
  offshoot_query: queryRun,
  offshoot_log: logRun,
  offshoot_checkout: checkoutRun,
  offshoot_fork: forkRun,
  offshoot_checkpoint: checkpointRun,
  offshoot_touch: touchRun,
  offshoot_rollback: rollbackRun,
  offshoot_promote: promoteRun,
  offshoot_merge: mergeRun,
  offshoot_destroy: destroyRun,
};

/** One tool as this server registers it: the catalogue's spec and how it runs here. */
interface ServedTool {
  spec: ToolSpec;
  run: ToolRun<ToolSpec>;
}

/** Every tool, in the order hosts list them: the catalogue, with the fork's default TTL this server applies. */
export function servedTools(options: Pick<McpOptions, 'defaultTtl'>): ServedTool[] {
  const catalogue = toolCatalogue({ defaultTtl: ttlText(options.defaultTtl) ?? 'none', defaultIfHead: false });
  return (Object.keys(catalogue) as ToolName[]).map((name) => ({
    spec: catalogue[name] as ToolSpec,
    run: RUNS[name] as unknown as ToolRun<ToolSpec>,
  }));
}

/** The server-level instructions hosts may show the model. */
export const INSTRUCTIONS = `offshoot gives every attempt its own real SQLite database branch.\n${LOOP_STEPS}\n\n${LOOP_RULES}`;

/** Resource links per result at most (offshoot_list of a large store touches every branch). */
const MAX_LINKS = 50;

/** The protocol era one server instance serves: 2025-era (initialize, sessions) or 2026-07-28 (per request). */
export type Era = 'legacy' | 'modern';

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
  confirmations: Confirmations;
  era: Era;
  links: DaemonLinks;
}

/**
 * A line about one call: to the server's log (2025-era clients that set a level, else stderr) and, on a
 * 2026-07-28 request that names a log level, to the caller on the call's own stream.
 */
function callLog(scope: CallScope, ctx: ServerContext, line: string, level: LoggingLevel): void {
  scope.hub.log(line, level);
  if (scope.era === 'modern') void ctx.mcpReq.log(level, line, 'offshoot').catch(() => undefined);
}

/**
 * A call the safety policy refused, under -confirm-force: asks the host's human (when the client can be asked and
 * the call is one a human may confirm) by returning the question as an `input_required` result. Anything else is
 * the original refusal.
 */
async function ask(
  { spec, run }: ServedTool,
  args: Record<string, unknown>,
  refusal: unknown,
  scope: CallScope,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  const caps = scope.era === 'modern' ? clientCapabilities(ctx) : scope.server.server.getClientCapabilities();
  if (!canElicit(caps) || run.confirm === undefined) return errorResult(refusal);
  const question = await run.confirm(
    args as never,
    callDeps(scope.options, spec.name, scope.open, scope.links, callControl(ctx)),
  );
  if (question === undefined) return errorResult(refusal);
  callLog(scope, ctx, `offshoot: mcp: asking the human: ${question.message}`, 'notice');
  return scope.confirmations.ask(spec.name, args, question);
}

/**
 * The retry of a call the human was asked about: on an explicit yes it runs once more with force for that call
 * alone, provided the state the human was shown has not moved; anything else is a refusal.
 */
async function answered(
  { spec, run }: ServedTool,
  args: Record<string, unknown>,
  answer: Answer,
  scope: CallScope,
  ctx: ServerContext,
): Promise<CallToolResult> {
  if (!answer.yes) {
    callLog(scope, ctx, `offshoot: mcp: ${spec.name} not confirmed: ${answer.why}`, 'notice');
    return errorResult(notConfirmed(answer.why, answer.question));
  }
  const deps = callDeps(scope.options, spec.name, scope.open, scope.links, callControl(ctx), true);
  const now = await run.confirm?.(args as never, deps);
  if (now?.fingerprint !== answer.question.fingerprint) return errorResult(confirmationStale());
  callLog(scope, ctx, `offshoot: mcp: the human confirmed ${spec.name}: ${answer.question.message}`, 'notice');
  const out = await run.run(args as never, deps);
  await scope.hub.poke();
  return confirmedNote(success(out, deps));
}

function register(tool: ServedTool, scope: CallScope): void {
  const { spec, run } = tool;
  scope.server.registerTool(
    spec.name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: toolInput(spec.input),
      outputSchema: z.object(spec.output),
      annotations: { title: spec.title, ...spec.annotations },
    },
    // The SDK has validated args against spec.input by now.
    async (args: Record<string, unknown>, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> => {
      try {
        const answer = scope.confirmations.answer(spec.name, args, ctx);
        if (answer !== undefined) return await answered(tool, args, answer, scope, ctx);
        const deps = callDeps(scope.options, spec.name, scope.open, scope.links, callControl(ctx));
        try {
          const out = await run.run(args as never, deps);
          if (!spec.annotations.readOnlyHint) await scope.hub.poke();
          return success(out, deps);
        } catch (err) {
          // The catalogue's one rule of whether a call needs the human, asked only under -confirm-force.
          if (!scope.options.confirmForce || !needsHuman(spec, args, err)) return errorResult(err);
          return await ask(tool, args, err, scope, ctx);
        }
      } catch (err) {
        return errorResult(err);
      }
    },
  );
}

/**
 * Builds an MCP server with the twelve tools, the offshoot-loop prompt and the branch resources over one store opener,
 * for one protocol era: a 2025-era server is attached to the hub that carries its logs and resource notifications
 * (a 2026-07-28 one hears changes through its listen streams, which the serving entry owns).
 */
export function buildServer(
  options: McpOptions,
  open: () => Promise<OpsContext>,
  version: string,
  hub: McpHub,
  confirmations: Confirmations,
  era: Era,
  links: DaemonLinks,
): McpServer {
  const server = new McpServer(
    { name: 'offshoot', version },
    {
      instructions: INSTRUCTIONS,
      capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } },
      requestState: { verify: confirmations.verify },
      inputRequired: { roundTimeoutMs: CONFIRM_TIMEOUT_MS },
    },
  );
  const scope: CallScope = { options, open, hub, server, confirmations, era, links };
  for (const t of servedTools(options)) register(t, scope);
  registerLoopPrompt(server);
  registerResources(server, open, era === 'legacy' ? () => hub.listed(server) : () => undefined);
  if (era === 'legacy') hub.attach(server);
  return server;
}
