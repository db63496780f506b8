import { checkoutTool } from './tools/checkout.js';
import { checkpointTool } from './tools/checkpoint.js';
import { destroyTool } from './tools/destroy.js';
import { diffTool } from './tools/diff.js';
import { forkTool } from './tools/fork.js';
import { listTool } from './tools/list.js';
import { logTool } from './tools/log.js';
import { promoteTool } from './tools/promote.js';
import { queryTool } from './tools/query.js';
import { rollbackTool } from './tools/rollback.js';
import { touchTool } from './tools/touch.js';

/**
 * What a surface fills into the catalogue: the TTL a fork gets when the call names none (`none` for none), and
 * whether a promote of a fork the surface made onto its base defaults `if_head` to the head it was forked at.
 */
export interface Surface {
  defaultTtl: string;
  defaultIfHead: boolean;
}

/**
 * Every offshoot tool, by name, in the order hosts list them: what the MCP server registers and the AI SDK adapter
 * builds its tools from, each adding only how a call runs.
 */
export function toolCatalogue(surface: Surface) {
  return {
    offshoot_list: listTool,
    offshoot_diff: diffTool,
    offshoot_query: queryTool,
    offshoot_log: logTool,
    offshoot_checkout: checkoutTool,
    offshoot_fork: forkTool(surface.defaultTtl),
    offshoot_checkpoint: checkpointTool,
    offshoot_touch: touchTool,
    offshoot_rollback: rollbackTool,
    offshoot_promote: promoteTool(surface.defaultIfHead),
    offshoot_destroy: destroyTool,
  } as const;
}

/** The catalogue's type: each tool's spec by its name. */
export type ToolCatalogue = ReturnType<typeof toolCatalogue>;

/** One tool's name. */
export type ToolName = keyof ToolCatalogue;
