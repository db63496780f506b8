// What an MCP host does with a server command at first use: start it with stdin and stdout as pipes (never a
// terminal), initialize, list the tools and call one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** What a host saw of a server: its tool count, and the daemon sessions `offshoot_list` reported (-1 when refused). */
export interface HostView {
  tools: number;
  daemonSessions: number;
  listText: string;
}

/** Starts command as a stdio MCP server the way a host does, talks to it, and stops it. */
export async function hostHandshake(
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<HostView> {
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: opts.cwd,
    env: Object.fromEntries(Object.entries(opts.env).filter((e): e is [string, string] => e[1] !== undefined)),
    stderr: 'inherit',
  });
  const client = new Client({ name: 'docs-host', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.length;
    const list = (await client.callTool({ name: 'offshoot_list', arguments: {} })) as {
      isError?: boolean;
      content: Array<{ type: string; text?: string }>;
      structuredContent?: { daemon?: { sessions?: number } | null };
    };
    const listText = list.content.map((c) => c.text ?? '').join('\n');
    const daemonSessions = list.isError ? -1 : (list.structuredContent?.daemon?.sessions ?? 0);
    return { tools, daemonSessions, listText };
  } finally {
    await client.close();
  }
}
