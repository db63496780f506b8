// What the host application around the agent brings to these tests: its own SQL tool, and the human's answer to
// an approval request.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { type ModelMessage, tool } from 'ai';
import { z } from 'zod';

/** Runs SQL on a file with the stock sqlite3 CLI and returns what it printed. */
export function sql(path: string, text: string): string {
  return execFileSync('sqlite3', ['-bail', path, text], { encoding: 'utf8' });
}

/** The host's own tool (not offshoot's): runs SQL on a file the agent checked out. */
export const runSql = tool({
  description: 'run SQL on a SQLite file',
  inputSchema: z.object({ path: z.string(), sql: z.string() }),
  execute: async ({ path, sql: text }) => ({ out: sql(path, text) }),
});

/** The messages that continue a run after the human answered its approval request. */
export function answered(r: { response: { messages: ModelMessage[] } }, approvalId: string, approved: boolean) {
  return [
    { role: 'user', content: 'work on the database' },
    ...r.response.messages,
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved }] },
  ] satisfies ModelMessage[];
}

/** The id of the approval request among a step's content; fails when the step asked for none. */
export function approvalOf(content: Array<{ type: string }>): string {
  const req = content.find((c) => c.type === 'tool-approval-request') as { approvalId: string } | undefined;
  assert.ok(req, `expected an approval request, got ${JSON.stringify(content)}`);
  return req.approvalId;
}
