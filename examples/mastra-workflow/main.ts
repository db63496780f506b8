// Mastra's own LibSQL storage on an offshoot branch, a fork per workflow run: a refund run suspends for a human
// decision; its suspended state is forked twice and resumed one way in each fork (approve, reject), side by side;
// the diff shows what each outcome wrote, and the chosen one is promoted onto main.
// Run: node --import tsx examples/mastra-workflow/main.ts
import { Mastra } from '@mastra/core';
import { LibSQLStore } from '@mastra/libsql';
import { type Client, connect } from '@offshoot/client';
import { exampleDaemon } from '../daemon-for-example.js';
import { refundWorkflow } from './refund-workflow.js';

/** Mastra with its storage in the checkout a daemon session captures: every commit Mastra makes lands on the branch. */
async function onBranch<T>(client: Client, branch: string, work: (mastra: Mastra) => Promise<T>): Promise<T> {
  const session = await client.open('mastra', branch);
  const storage = new LibSQLStore({ id: branch, url: `file:${session.path}` });
  try {
    return await work(new Mastra({ workflows: { refund: refundWorkflow() }, storage, logger: false }));
  } finally {
    await storage.close();
    await session.close(); // flushes what Mastra wrote since the last checkpoint
  }
}

const daemon = await exampleDaemon([]); // nothing here expires: the daemon's default janitor
const client = await connect(daemon.sock);
try {
  await client.create('mastra');

  // 1. A fork per run: the run starts, assesses, and suspends waiting for a human; its storage says so.
  await client.fork('mastra', 'main', 'run-1', { ttl: '1h' });
  const runId = await onBranch(client, 'run-1', async (mastra) => {
    const run = await mastra.getWorkflow('refund').createRun();
    const r = await run.start({ inputData: { orderId: 7, amount: 120 } });
    console.log(`run-1: ${r.status}`);
    return run.runId;
  });
  await client.checkpoint('mastra', 'run-1', 'suspended');

  // 2. Fork the suspended run twice and resume it one way in each fork.
  for (const [branch, approved] of [
    ['run-1-approve', true],
    ['run-1-reject', false],
  ] as const) {
    await client.fork('mastra', 'run-1', branch, { from: 'suspended', ttl: '1h' });
    await onBranch(client, branch, async (mastra) => {
      const run = await mastra.getWorkflow('refund').createRun({ runId });
      const r = await run.resume({ step: 'decide', resumeData: { approved } });
      console.log(`${branch}: ${r.status} ${r.status === 'success' ? JSON.stringify(r.result) : ''}`);
    });
    await client.checkpoint('mastra', branch, 'decided');
  }

  // 3. What the two outcomes wrote differently, in Mastra's own tables.
  const diff = await client.diff('mastra@run-1-approve', 'mastra@run-1-reject', { summary: true });
  const changed = diff.tables.filter((t) => t.status !== 'same').map((t) => t.table);
  console.log(`approve vs reject differ in: ${changed.join(', ')}`);

  // 4. Keep the approved outcome on main (protected: force); the other fork expires with its TTL.
  await client.promote('mastra', 'run-1-approve', 'main', { force: true });
  const onMain = await onBranch(client, 'main', async (mastra) => {
    const workflows = await mastra.getStorage()?.getStore('workflows');
    const snap = await workflows?.loadWorkflowSnapshot({ workflowName: 'refund', runId });
    return snap?.status;
  });
  console.log(`main: run ${runId.slice(0, 8)} is ${String(onMain)}`);
} finally {
  client.close();
  await daemon.stop();
}
