import type { RunnableConfig } from '@langchain/core/runnables';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';

/** A two-node graph whose state shows every step it ran: a counter and an append-only log. */
const State = Annotation.Root({
  n: Annotation<number>({ reducer: (_old, next) => next, default: () => 0 }),
  log: Annotation<string[]>({ reducer: (old, next) => old.concat(next), default: () => [] }),
});

/** Compiles the graph against `saver`. */
export function buildGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode('plan', (s) => ({ log: [`plan@${s.n}`] }))
    .addNode('act', (s) => ({ n: s.n + 1, log: [`act@${s.n}`] }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', END)
    .compile({ checkpointer: saver });
}

/** The config of one thread. */
export function thread(id: string): RunnableConfig {
  return { configurable: { thread_id: id } };
}

/** Everything a saver holds for a thread: its latest tuple and its whole history, newest first. */
export async function snapshot(
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<{ tuple: CheckpointTuple | undefined; history: CheckpointTuple[] }> {
  const history: CheckpointTuple[] = [];
  for await (const t of saver.list(config)) history.push(t);
  return { tuple: await saver.getTuple(config), history };
}
