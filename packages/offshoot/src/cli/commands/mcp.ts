import { packageVersion } from '../package-version.js';
import { durationMs, parseDuration, type Duration } from '../../core/duration.js';
import { fail } from '../../core/errors.js';
import type { Command, Invocation } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';

// `0` and `none` switch a duration flag off; a negative one is a mistake, not a way to say off.
function durationFlag(inv: Invocation, flag: string, fallback: string): Duration | undefined {
  const text = inv.flags.string(flag) ?? fallback;
  if (text === 'none') return undefined;
  const d = parseDuration(text);
  if (d < 0n)
    throw fail('INVALID_ARGUMENT', `-${flag} must not be negative`, {
      hint: `use 0 or none to disable, or a positive duration such as ${fallback}`,
    });
  return d === 0n ? undefined : d;
}

/** `offshoot mcp [flags]`: the MCP server, on stdio (or Streamable HTTP with -http), until its input ends. */
export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'serve the branch loop to an AI agent over the Model Context Protocol (stdio)',
  examples: [
    'claude mcp add offshoot -- offshoot -store ./.offshoot mcp',
    'offshoot -store ./.offshoot mcp -socket /tmp/o.sock -default-ttl 2h',
  ],
  usage:
    '[-default-ttl D|none] [-reap-every D|none] [-allow-force] [-confirm-force] [-socket PATH] [-query-timeout D] [-http ADDR [-token T] [-http-allow-non-loopback]]',
  help: [
    'Speaks MCP on stdin/stdout (nothing else is written to stdout; logs go to stderr) with eleven tools: offshoot_list,',
    'offshoot_diff, offshoot_query, offshoot_log (read-only); offshoot_checkout, offshoot_fork, offshoot_checkpoint, offshoot_touch;',
    'offshoot_rollback, offshoot_promote, offshoot_destroy (destructive), and the offshoot-loop prompt.',
    'Forks that name no ttl get -default-ttl (24h; 0 or none disables). Every -reap-every (60s; 0 or none disables)',
    'it reaps expired forks and clears stranded destroy claims (no GC), stepping aside while an offshoot serve',
    'daemon serves the same store. force is honoured only with -allow-force; with -confirm-force a refused forced',
    "promote, rollback or destroy of a protected branch asks the host's human (MCP elicitation) and goes ahead only",
    'on an explicit accept. The tools ride the daemon serving the store (found by its lock, or at -socket): checkpoint',
    'flushes an open session live, checkout returns its live path, fork and touch ride it, and rollback, promote',
    'onto and destroy refuse a branch with a session. Branches are resources (offshoot://DB/BRANCH) clients can',
    'read and subscribe to. -http serves MCP Streamable HTTP at /mcp instead of stdio, with the rules of serve -http',
    '(loopback unless acknowledged, a bearer token on every request, Host and Origin checked).',
    'Wire it into a host: claude mcp add offshoot -- offshoot -store ./.offshoot mcp',
  ].join('\n'),
  flags: {
    'default-ttl': {
      type: 'string',
      value: 'DURATION',
      description: 'TTL of forks that name none (default 24h; 0 or none: no default)',
    },
    'reap-every': {
      type: 'string',
      value: 'DURATION',
      description: 'background reap interval (default 60s; 0 or none disables)',
    },
    'allow-force': { type: 'boolean', description: 'honour force: true from the agent (off by default)' },
    'confirm-force': {
      type: 'boolean',
      description:
        "ask the host's human (MCP elicitation) before a forced change of a protected branch (off by default)",
    },
    socket: {
      ...SOCKET_FLAG,
      description:
        'the daemon the tools ride (default $OFFSHOOT_SOCKET, else the daemon serving the store, else the derived socket)',
    },
    'query-timeout': {
      type: 'string',
      value: 'DURATION',
      description: 'longest an offshoot_query statement may run (default 5s)',
    },
    http: { type: 'string', value: 'ADDR', description: 'serve MCP Streamable HTTP on host:port instead of stdio' },
    token: {
      type: 'string',
      value: 'TOKEN',
      description: 'bearer token for -http (at least 16 characters; default $OFFSHOOT_TOKEN, else generated)',
    },
    'http-allow-non-loopback': {
      type: 'boolean',
      description: 'allow -http on a non-loopback address (needs an explicit token)',
    },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const ttl = durationFlag(inv, 'default-ttl', '24h');
    const reapEvery = durationFlag(inv, 'reap-every', '60s');
    const queryTimeout = durationFlag(inv, 'query-timeout', '5s');
    const { validateHttpFlags } = await import('../../protocol/http-listen.js');
    const token = inv.flags.string('token');
    const http = validateHttpFlags({
      ...(inv.flags.string('http') !== undefined ? { http: inv.flags.string('http') } : {}),
      ...(token !== undefined ? { token } : {}),
      allowNonLoopback: inv.flags.boolean('http-allow-non-loopback'),
    });
    const spec = inv.storeSpec();
    const { socketFor } = await import('../daemon-request.js');
    const socket = socketFor(inv);
    const [{ runMcp }, { openOpsContext }] = await Promise.all([
      import('../../mcp/run.js'),
      import('../store-context.js'),
    ]);
    const log = (line: string): void => void process.stderr.write(`${line}\n`);
    await runMcp({
      options: {
        defaultTtl: ttl === undefined ? { kind: 'none' } : { kind: 'set', ttl },
        allowForce: inv.flags.boolean('allow-force'),
        confirmForce: inv.flags.boolean('confirm-force'),
        socket,
        socketExplicit: inv.flags.string('socket') !== undefined || (process.env['OFFSHOOT_SOCKET'] ?? '') !== '',
        reapEveryMs: reapEvery === undefined ? 0 : durationMs(reapEvery),
        queryTimeoutMs: queryTimeout === undefined ? 5000 : durationMs(queryTimeout),
      },
      openStore: () =>
        openOpsContext(spec, process.env, { warn: (m) => log(`offshoot: warning: ${m}`), progress: undefined }),
      version: packageVersion(),
      ...(http ? { http } : {}),
      log,
    });
    return { data: { stopped: true }, text: '' };
  },
};
