// The table and chart at the top of docs/benchmarks.md are what `make bench-summary` draws from the committed data
// file: a hand edit of either, or a data file committed without them, fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  PAGE_MARKERS,
  renderBlock,
  renderSvg,
  replaceBlock,
  SUMMARY_FILES,
  SUMMARY_ROWS,
  type SummaryData,
} from '../../bench/summary-render.js';
import { repoRoot } from '../e2e/cli-harness.js';

const read = (rel: string): string => readFileSync(join(repoRoot, rel), 'utf8');
const data = JSON.parse(read(SUMMARY_FILES.data)) as SummaryData;

describe('the benchmark summary', () => {
  test('the data file has every row of the summary at three sizes, and a reason for each figure it lacks', () => {
    assert.equal(data.sizes.length, 3);
    assert.deepEqual(
      data.rows.map((r) => r.id),
      SUMMARY_ROWS.map((r) => r.id),
    );
    assert.deepEqual(
      SUMMARY_ROWS.map((r) => r.id),
      ['fork', 'checkpoint', 'checkout', 'diff', 'episode', 'cp', 'vacuum', 'json', 'saverPut', 'saverGet'],
    );
    for (const r of data.rows) {
      assert.equal(r.ms.length, data.sizes.length, r.id);
      if (r.ms.includes(null)) assert.ok(SUMMARY_ROWS.find((x) => x.id === r.id)?.note, `${r.id} lacks a figure`);
    }
  });

  test("docs/benchmarks.md's table is the one drawn from the data file", () => {
    const page = read('docs/benchmarks.md');
    assert.ok(page.includes(PAGE_MARKERS[0] as string) && page.includes(PAGE_MARKERS[1] as string));
    assert.equal(replaceBlock(page, renderBlock(data)), page);
  });

  test('the committed chart is the one drawn from the data file', () => {
    assert.equal(read(SUMMARY_FILES.chart), renderSvg(data));
  });

  test('a chart draws a bar per figure and says where one cannot be measured', () => {
    const svg = renderSvg({
      ...data,
      rows: [
        { id: 'fork', ms: [1, 10, 100] },
        { id: 'cp', ms: [2, 20, null] },
      ],
    });
    assert.equal(svg.match(/<rect [^>]*height="8"/g)?.length, 5);
    assert.match(svg, /not measurable/);
    assert.match(svg, />cp of the file<\/text>/);
    assert.throws(() => renderSvg({ ...data, rows: [{ id: 'nope', ms: [1, 2, 3] }] }), /no row "nope"/);
  });
});
