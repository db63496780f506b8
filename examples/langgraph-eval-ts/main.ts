// The eval loop: seed a thread, fork it per attempt, run a compiled StateGraph on each fork, keep the winner on
// main, and let the losers expire. Run: node --import tsx examples/langgraph-eval-ts/main.ts
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { connect } from '@offshoot/client';
import { OffshootSaver } from '@offshoot/langgraph';
import { exampleDaemon } from '../daemon-for-example.js';

const State = Annotation.Root({
  question: Annotation<string>({ reducer: (_old, next) => next, default: () => '' }),
  answer: Annotation<string>({ reducer: (_old, next) => next, default: () => '' }),
  score: Annotation<number>({ reducer: (_old, next) => next, default: () => 0 }),
  trail: Annotation<string[]>({ reducer: (old, next) => old.concat(next), default: () => [] }),
});

/** A stand-in agent: each attempt answers with its own strategy; the grader scores the answer. */
function buildApp(saver: OffshootSaver, strategy: (q: string) => string) {
  return new StateGraph(State)
    .addNode('agent', (s) => ({ answer: strategy(s.question), trail: [`agent:${saver.branch}`] }))
    .addNode('grade', (s) => ({ score: s.answer === '42' ? 1 : s.answer.length / 100, trail: ['grade'] }))
    .addEdge(START, 'agent')
    .addEdge('agent', 'grade')
    .addEdge('grade', END)
    .compile({ checkpointer: saver });
}

const STRATEGIES: Record<string, (q: string) => string> = {
  echo: (q) => q,
  guess: () => '41',
  think: () => '42',
};

const daemon = await exampleDaemon();
const ttl = daemon.private ? '2s' : '1h';
const config = { configurable: { thread_id: 'eval-thread' } };
try {
  // 1. Seed the thread on main and make it durable as a named checkpoint.
  const seed = await OffshootSaver.session(daemon.sock, 'evals');
  await buildApp(seed, () => '').invoke({ question: 'the answer to everything?' }, config);
  await seed.checkpoint('seeded', { suite: 'example' });

  // 2. Fork one branch per attempt from the seed; each reaps itself after `ttl` unless promoted.
  const attempts = await Promise.all(
    Object.keys(STRATEGIES).map((name) => seed.forkThread(`attempt-${name}`, { ttl, fromCheckpoint: 'seeded' })),
  );
  await seed.close(); // promote repoints main's checkout: main's session must be closed

  // 3. Run the compiled graph on every attempt, each with the seeded thread's full history.
  const results: { saver: OffshootSaver; score: number }[] = [];
  for (const saver of attempts) {
    const strategy = STRATEGIES[saver.branch.replace('attempt-', '')] ?? (() => '');
    const out = await buildApp(saver, strategy).invoke({}, config);
    await saver.checkpoint('graded', { score: String(out.score) });
    results.push({ saver, score: out.score });
    console.log(`${saver.branch}: answer=${out.answer} score=${out.score}`);
  }

  // 4. Keep the winner: promote its state onto main (protected, so force). Losers are closed and expire.
  results.sort((a, b) => b.score - a.score);
  const [winner, ...losers] = results;
  if (winner === undefined) throw new Error('no attempt ran');
  await winner.saver.promote('main', { force: true });
  await winner.saver.destroy();

  const main = await OffshootSaver.session(daemon.sock, 'evals', 'main', { create: false });
  const state = (await main.getTuple(config))?.checkpoint.channel_values;
  await main.close();
  if (state?.['answer'] !== '42') throw new Error(`main holds ${JSON.stringify(state)}, not the winner`);
  console.log(`winner: ${winner.saver.branch}; main: answer=${String(state['answer'])}`);

  // 5. Close the losers: their TTL clock starts now. A private daemon's janitor runs every second, so watch its
  // events until it has reaped each of them (the subscription is made as they close; a reap comes a TTL later).
  if (!daemon.private) {
    for (const loser of losers) await loser.saver.close();
    console.log(`losers closed; the daemon's janitor reaps them ${ttl} after`);
  } else {
    const client = await connect(daemon.sock);
    const events = client.events();
    const first = events.next();
    for (const loser of losers) await loser.saver.close();
    const pending = new Set(losers.map((l) => l.saver.branch));
    let ev = await first;
    while (!ev.done) {
      if (ev.value.type === 'reaped' && ev.value.db === 'evals' && ev.value.branch !== undefined) {
        pending.delete(ev.value.branch);
        console.log(`expired and reaped: ${ev.value.branch}`);
      }
      if (pending.size === 0) break;
      ev = await events.next();
    }
    await events.return();
    const left = (await client.branches('evals')).map((b) => b.branch).filter((b) => b.startsWith('attempt-'));
    await client.close();
    if (left.length > 0) throw new Error(`losers still there: ${left.join(', ')}`);
  }
} finally {
  await daemon.stop();
}
