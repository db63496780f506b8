import {
  type ActorOptions,
  type BranchPlace,
  type CheckRequest,
  type Client,
  DaemonPlace,
  StorePlace,
} from '@offshoot/client';
import {
  type ArgsOf,
  confirmable,
  type OutputOf,
  type Shape,
  type ToolCatalogue,
  type ToolSpec,
  toolCatalogue,
  toolSchemas,
} from '@offshoot/tools';
import { type ModelMessage, type Tool, tool } from 'ai';
import { approvedByHuman, wouldNeedHuman } from './approval.js';
import { asTool } from './model-error.js';
import { ForkHeads } from './fork-heads.js';
import { AGENT_TOOLS, type AgentToolName, toolChecks, toolRuns } from './tool-runs.js';

/** Where the tools act: a daemon through its client, or a store at rest through the `offshoot` CLI. */
export type OffshootTarget =
  | {
      /** A connected daemon client (`connect(socket)`); the caller closes it. */
      client: Client;
    }
  | {
      /** The store (a path or `s3://bucket/prefix`), driven by the `offshoot` CLI with no daemon. */
      store: string;
      /** The offshoot binary; default OFFSHOOT_BIN, else `offshoot` on PATH. */
      bin?: string;
    };

/** Options of `offshootTools`. */
export type OffshootToolsOptions = OffshootTarget & {
  /** The TTL a fork gets when the model names none, as the MCP server's `-default-ttl`; `none` for no TTL. Default `24h`. */
  defaultTtl?: string;
  /**
   * The human allows the agent to force past protection (never a live lease), like `offshoot mcp -allow-force`. It
   * is passed to offshoot with every call; offshoot, not this package, decides what it permits. Default false.
   */
  allowForce?: boolean;
};

/** What the branch log says the tools' calls come through: this package, for the Vercel AI SDK. */
export const SURFACE = 'sdk:ai-sdk/ai';

/** The place the tools call: every call says an agent asks, and whether its human lets it force. */
function placeFor(opts: OffshootToolsOptions, allowForce: boolean): BranchPlace {
  const agent: ActorOptions = { actor: 'agent', allowForce, origin: { surface: SURFACE } };
  if ('client' in opts) return new DaemonPlace(opts.client, agent);
  return new StorePlace({ store: opts.store, ...(opts.bin !== undefined ? { bin: opts.bin } : {}) }, agent);
}

type ToolOf<K extends AgentToolName> = Tool<ArgsOf<ToolCatalogue[K]['input']>, OutputOf<ToolCatalogue[K]['output']>>;

/** The tools `offshootTools` returns, by name (the MCP server's tool names); a type, so it is an AI SDK ToolSet. */
export type OffshootTools = { [K in AgentToolName]: ToolOf<K> };

/**
 * The offshoot branch loop as AI SDK tools (`offshoot_fork`, `_checkout`, `_checkpoint`, `_diff`, `_query`,
 * `_rollback`, `_promote`, `_destroy`), built from the tool catalogue (`@offshoot/tools`) the MCP server registers:
 * the same names, descriptions and schemas (offshoot_promote says one thing more: a fork these tools made is
 * promoted onto its base only while the base is still at the head it was forked at, its `if_head` by default). Each
 * call is one call of the daemon client or one run of the CLI at rest, and says that an agent asks, so offshoot
 * applies the MCP server's safety rules. A call needs the human's
 * approval (`needsApproval`) by the MCP server's rule: offshoot would refuse it with a refusal the human may lift
 * (asked with a check of the call first); a call the human approved runs with force allowed for it alone. A failure
 * is the client's OffshootError (code, hint), never retried.
 */
export function offshootTools(options: OffshootToolsOptions): OffshootTools {
  const allowForce = options.allowForce ?? false;
  const defaultTtl = options.defaultTtl ?? '24h';
  const catalogue = toolCatalogue({ defaultTtl, defaultIfHead: true });
  const heads = new ForkHeads();
  const runs = toolRuns({ defaultTtl, allowForce }, heads);
  const checks = toolChecks(heads);
  const places = { agent: placeFor(options, allowForce), confirmed: placeFor(options, true) };

  /** One tool: the catalogue's spec, this adapter's run, and the check of a call the human may be asked about. */
  function adapt<I extends Shape, O extends Shape>(
    spec: ToolSpec<I, O>,
    run: (args: ArgsOf<I>, place: BranchPlace) => Promise<OutputOf<O>>,
    check: ((args: ArgsOf<I>) => CheckRequest) | undefined,
  ): Tool<ArgsOf<I>, OutputOf<O>> {
    const schemas = toolSchemas(spec);
    const approval = check && {
      needsApproval: (input: ArgsOf<I>) => wouldNeedHuman(spec, input, () => places.agent.check(check(input))),
    };
    // Force for this call alone, where the human approved a call they may confirm: never for any other call a host
    // had its human approve for its own reasons.
    const execute = (input: ArgsOf<I>, call: { toolCallId: string; messages: ModelMessage[] }) => {
      const confirmed = confirmable(spec, input) && approvedByHuman(call.toolCallId, call.messages);
      return asTool(() => run(input, confirmed ? places.confirmed : places.agent));
    };
    // Generic over the tool, the schemas' zod types do not reduce to ArgsOf<I> / OutputOf<O> for tool()'s
    // overloads; per tool they do, and OffshootTools states them.
    return tool({
      description: spec.description,
      inputSchema: schemas.input,
      outputSchema: schemas.output,
      ...approval,
      execute,
    } as never) as Tool<ArgsOf<I>, OutputOf<O>>;
  }

  return Object.fromEntries(
    AGENT_TOOLS.map((name) => [name, adapt(catalogue[name] as ToolSpec, runs[name] as never, checks[name] as never)]),
  ) as OffshootTools;
}
