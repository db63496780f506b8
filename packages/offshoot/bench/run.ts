import { cpus, totalmem } from 'node:os';
import { bigStoreBench } from './big-store-bench.js';
import { compactionBench } from './compaction-bench.js';
import { daemonBench } from './daemon-bench.js';
import { engineBench } from './engine-bench.js';
import { idleSessionsBench } from './idle-sessions-bench.js';
import { episodeBench } from './episode-bench.js';
import { episodeGoalsBench } from './episode-goals.js';
import { fanoutBench } from './fanout-bench.js';
import { historyBench } from './history-bench.js';
import { ltxBench } from './ltx-bench.js';
import { mcpBench } from './mcp-bench.js';
import { mergeBench } from './merge-bench.js';
import { s3Bench } from './s3-bench.js';
import { uiBench } from './ui-bench.js';
import { startupBench } from './startup-bench.js';

console.log(
  `offshoot bench — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
);
await startupBench();
await ltxBench();
await engineBench();
await compactionBench();
await historyBench();
await mergeBench();
await s3Bench();
await daemonBench();
await idleSessionsBench();
await uiBench();
await mcpBench();
await episodeBench();
await episodeGoalsBench();
await fanoutBench();
await bigStoreBench();
