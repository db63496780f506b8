import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { HttpConfig } from '../protocol/http-listen.js';
import { tokenFingerprint } from '../protocol/http-listen.js';
import type { OpsContext } from '../ops/helpers/context/context.js';
import type { McpOptions } from './deps.js';
import { startMcpHttp } from './http.js';
import { McpHub } from './hub.js';
import { startReaper } from './reaper.js';
import { buildServer } from './server.js';

/** What `offshoot mcp` runs with, beyond the tool options. */
export interface McpRun {
  options: McpOptions;
  /** Opens the store; called on first use and again after a failure (a missing store is a tool error, not an exit). */
  openStore: () => Promise<OpsContext>;
  version: string;
  /** Serve MCP Streamable HTTP instead of stdio. */
  http?: HttpConfig;
  log: (line: string) => void;
}

/** Memoizes a successful open; a failed one is retried by the next caller. */
function opener(open: () => Promise<OpsContext>): {
  open: () => Promise<OpsContext>;
  opened: () => OpsContext | undefined;
} {
  let pending: Promise<OpsContext> | undefined;
  let ctx: OpsContext | undefined;
  return {
    open: () => {
      if (ctx) return Promise.resolve(ctx);
      pending ??= open().then(
        (c) => (ctx = c),
        (err: unknown) => {
          pending = undefined;
          throw err;
        },
      );
      return pending;
    },
    opened: () => ctx,
  };
}

/**
 * Runs the MCP server until its input ends (stdio) or a signal arrives (HTTP): only protocol on stdout; logs go to
 * the clients that set a log level, else to stderr; the background reaper runs alongside when -reap-every is on.
 */
export async function runMcp(run: McpRun): Promise<void> {
  const store = opener(run.openStore);
  const hub = new McpHub(store.open, run.log);
  const reaper =
    run.options.reapEveryMs > 0
      ? startReaper(
          store.open,
          run.options.reapEveryMs,
          (line) => hub.log(line, 'info'),
          () => hub.poke(),
        )
      : undefined;
  try {
    if (run.http) {
      const http = await startMcpHttp(run.http, () => buildServer(run.options, store.open, run.version, hub));
      if (run.http.tokenSource === 'generated')
        run.log(`offshoot: mcp: http: generated token ${run.http.token} (set OFFSHOOT_TOKEN or -token to choose one)`);
      run.log(
        `offshoot: mcp: http: serving MCP on http://${http.address}/mcp (token fingerprint ${tokenFingerprint(run.http.token)})`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await http.close();
      return;
    }
    const server = buildServer(run.options, store.open, run.version, hub);
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      process.stdin.once('end', resolve);
      process.stdin.once('close', resolve);
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    await server.connect(transport);
    await closed;
    await server.close();
  } finally {
    hub.close();
    await reaper?.stop();
    await store
      .opened()
      ?.store.close()
      .catch(() => undefined);
  }
}
