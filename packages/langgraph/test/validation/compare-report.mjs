#!/usr/bin/env node
// Reads vitest's JSON report of the validation run and fails unless each OffshootSaver mode passes every test the
// stock SqliteSaver passes in the same run. Prints what the stock saver fails, so the record stays current.
import { readFileSync } from 'node:fs';

const STOCK = 'stock SqliteSaver';
const OURS = ['OffshootSaver.session', 'OffshootSaver.atRest'];
const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const results = new Map();
for (const file of report.testResults) {
  for (const a of file.assertionResults) {
    const [saver, ...rest] = a.ancestorTitles;
    const title = [...rest.map((t) => t.replace(`${saver}#`, '#')), a.title].join(' > ');
    if (!results.has(saver)) results.set(saver, new Map());
    const byName = results.get(saver);
    // Parameterised tests repeat a title; the spec runs them in the same order for every saver.
    let n = 1;
    while (byName.has(`${title} [${n}]`)) n++;
    byName.set(`${title} [${n}]`, a.status);
  }
}
const stock = results.get(STOCK);
if (stock === undefined || stock.size === 0) {
  console.error('validation: the stock SqliteSaver ran no test');
  process.exit(1);
}
const passedBy = (m) => [...m].filter(([, s]) => s === 'passed').map(([n]) => n);
const stockFails = [...stock].filter(([, s]) => s !== 'passed').map(([n]) => n);
let failed = false;
for (const mode of OURS) {
  const ours = results.get(mode) ?? new Map();
  const missing = passedBy(stock).filter((n) => ours.get(n) !== 'passed');
  const passed = passedBy(ours).length;
  console.log(`validation: ${mode} passed ${passed} of ${ours.size}; stock passed ${stock.size - stockFails.length}`);
  for (const n of missing) console.error(`  ${mode} fails what the stock saver passes: ${n}`);
  if (missing.length > 0 || ours.size !== stock.size) failed = true;
}
for (const n of stockFails) console.log(`validation: the stock SqliteSaver fails: ${n}`);
process.exit(failed ? 1 : 0);
