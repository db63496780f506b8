// An AI SDK agent migrates a database through offshoot's tools: it forks main, migrates and checks its fork, shows
// the diff, and asks to promote onto protected main; the host puts the promote to its human (needsApproval) before
// anything moves.
// Run: node --import tsx examples/ai-sdk-agent/main.ts
import { execFileSync } from 'node:child_process';
import { offshootTools } from '@offshoot/ai-sdk';
import { connect } from '@offshoot/client';
import { generateText, isStepCount, type ModelMessage, tool } from 'ai';
import { z } from 'zod';
import { exampleDaemon } from '../daemon-for-example.js';
import { scriptedModel } from '@offshoot/ai-sdk/testing'; // the AI SDK's offline model, scripted: use yours

const sqlite = (path: string, sql: string) =>
  execFileSync('sqlite3', ['-bail', path, sql], { encoding: 'utf8' }).trim();

// The host's own tool: the agent writes to the file offshoot_checkout gave it.
const runSql = tool({
  description: 'Run SQL on a SQLite file and return what it printed',
  inputSchema: z.object({ path: z.string(), sql: z.string() }),
  execute: async ({ path, sql }) => ({ printed: sqlite(path, sql) }),
});

const daemon = await exampleDaemon([]); // nothing here expires: the daemon's default janitor
const client = await connect(daemon.sock);
try {
  // The human's database: orders on protected main.
  await client.create('shop');
  const seed = await client.open('shop');
  sqlite(
    seed.path,
    'CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL); INSERT INTO orders VALUES (1, 9.5), (2, 40);',
  );
  await seed.flush('seeded');
  await seed.close();

  // The agent may not force onto protected main on its own: offshoot would refuse it, and the refusal is one the
  // human may lift, so the promote waits for the human (needsApproval) and their yes lets that one call force.
  const tools = { ...offshootTools({ client }), run_sql: runSql };
  const model = scriptedModel([
    { calls: [{ tool: 'offshoot_fork', input: { database: 'shop', new_branch: 'add-currency', ttl: '1h' } }] },
    { calls: [{ tool: 'offshoot_checkout', input: { database: 'shop', branch: 'add-currency' } }] },
    (last) => ({
      calls: [
        {
          tool: 'run_sql',
          input: {
            path: (last as { path: string }).path,
            sql: "ALTER TABLE orders ADD COLUMN currency TEXT NOT NULL DEFAULT 'EUR'",
          },
        },
      ],
    }),
    { calls: [{ tool: 'offshoot_checkpoint', input: { database: 'shop', branch: 'add-currency', name: 'migrated' } }] },
    { calls: [{ tool: 'offshoot_diff', input: { database: 'shop', target: 'add-currency', summary: true } }] },
    {
      calls: [
        { tool: 'offshoot_promote', input: { database: 'shop', source: 'add-currency', target: 'main', force: true } },
      ],
    },
    (last) => ({ text: `promoted: ${JSON.stringify(last)}` }),
  ]);

  const prompt: ModelMessage[] = [{ role: 'user', content: 'Add a currency column to shop.orders, safely.' }];
  const first = await generateText({ model, tools, messages: prompt, stopWhen: isStepCount(10) });
  for (const step of first.steps)
    for (const r of step.toolResults) console.log(`${r.toolName}: ${JSON.stringify(r.output).slice(0, 110)}`);

  // The run stopped at the promote: the host shows its human the call and the diff, and takes the answer.
  const ask = first.content.find((c) => c.type === 'tool-approval-request');
  if (ask === undefined) throw new Error('the promote did not wait for approval');
  console.log(`approval asked: ${ask.toolCall.toolName} ${JSON.stringify(ask.toolCall.input)}`);
  const columns = async () =>
    String(
      (await client.query('shop', 'main', "SELECT group_concat(name) FROM pragma_table_info('orders')")).rows[0]?.[0],
    );
  console.log(`main before approval: ${await columns()}`);
  console.log('the human approves');
  const answer: ModelMessage = {
    role: 'tool',
    content: [{ type: 'tool-approval-response', approvalId: ask.approvalId, approved: true }],
  };
  const second = await generateText({
    model,
    tools,
    messages: [...prompt, ...first.response.messages, answer],
    stopWhen: isStepCount(10),
  });
  console.log(`agent: ${second.text}`);
  console.log(`main after: ${await columns()}`);
} finally {
  client.close();
  await daemon.stop();
}
