#!/usr/bin/env node
// Renders every Markdown file of the repository (or the files named) with markdown-it, a CommonMark and GFM-table
// parser, and fails on what renders broken without any parse error:
// - a fence never closed: it swallows the rest of the file;
// - a fence line inside a fence that is not Markdown (```md may show fences on purpose): an inner ``` opens nothing,
//   so the outer fence swallows what follows it (a four-backtick fence around a ``` block does this unless it is
//   closed with four);
// - a table row with more or fewer cells than its header: GFM splits on every unescaped `|`, code spans included,
//   and drops the cells past the header's count;
// - a code span that does not close where it was meant to: a backtick left in the rendered text, a span ending in a
//   backslash (a backslash never escapes a backtick inside code; use a longer backtick fence), or a span opening
//   right after a letter (`is`CODE`` is a span that shifted by one backtick);
// - a `_` or `*` glued to a code span, left literal or pairing up as emphasis that opens right after a code span
//   (`database`_, `target`_): meant literally, it is written escaped (\*).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import MarkdownIt from 'markdown-it';

// Without text_join, a backslash escape stays its own token (text_special), so a character written escaped, meant
// literally, is told apart from the same character left bare.
const md = new MarkdownIt();
md.disable('text_join');

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/** The cells GFM makes of one table line: split on `|` not escaped by a backslash, outer pipes dropped. */
function cellCount(line) {
  const cells = [''];
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\' && i + 1 < line.length) {
      cells[cells.length - 1] += line[i] + line[i + 1];
      i++;
    } else if (line[i] === '|') cells.push('');
    else cells[cells.length - 1] += line[i];
  }
  if (cells[0].trim() === '') cells.shift();
  if (cells.length > 0 && cells[cells.length - 1].trim() === '') cells.pop();
  return cells.length;
}

function checkFence(tok, lines, problems) {
  const [start, end] = tok.map;
  const open = FENCE_LINE.exec(lines[start])?.[1] ?? tok.markup;
  const last = lines[end - 1] ?? '';
  const closing = FENCE_LINE.exec(last)?.[1];
  const closed =
    end - 1 > start &&
    closing !== undefined &&
    closing[0] === open[0] &&
    closing.length >= open.length &&
    last.trim() === closing;
  if (!closed)
    problems.push([start, `the ${open} fence opened here is never closed: it swallows the rest of the file`]);
  if (['md', 'markdown'].includes(tok.info.trim().split(/\s+/)[0])) return;
  for (let i = start + 1; i < (closed ? end - 1 : end); i++) {
    if (FENCE_LINE.test(lines[i])) {
      problems.push([i, `a fence line inside the ${open} fence opened at line ${start + 1}: it opens nothing there`]);
    }
  }
}

function checkTable(tok, lines, problems) {
  const [start, end] = tok.map;
  const want = cellCount(lines[start]);
  for (let i = start + 1; i < end; i++) {
    const got = cellCount(lines[i]);
    if (got !== want) {
      problems.push([
        i,
        `table row has ${got} cells, its header ${want} (every unescaped | splits, inside code spans too: write \\|)`,
      ]);
    }
  }
}

function checkInline(tok, line, problems) {
  const kids = tok.children ?? [];
  kids.forEach((k, i) => {
    const opensAfterCode = k.nesting === 1 && kids[i - 1]?.type === 'code_inline';
    const closesBeforeCode = k.nesting === -1 && kids[i + 1]?.type === 'code_inline';
    if (/^(em|strong)_/.test(k.type) && (opensAfterCode || closesBeforeCode)) {
      problems.push([
        line,
        `emphasis (${k.markup}) glued to a code span: a literal ${k.markup} is written \\${k.markup[0]}`,
      ]);
    }
    if (k.type === 'text' && k.content.includes('`')) {
      problems.push([line, `a stray backtick in the rendered text (a code span that does not close): ${k.content}`]);
    }
    if (k.type !== 'code_inline') return;
    if (k.content.endsWith('\\')) {
      problems.push([line, `code span ends in a backslash, which escapes nothing in code: \`${k.content}\``]);
    }
    const before = kids[i - 1]?.type === 'text' ? kids[i - 1].content : '';
    const after = kids[i + 1]?.type === 'text' ? kids[i + 1].content : '';
    if (/[\p{L}\p{N}]$/u.test(before)) {
      problems.push([line, `code span glued to the word before it: ${before.slice(-12)}\`${k.content}\``]);
    }
    if (/[_*]$/.test(before) || /^[_*]/.test(after)) {
      problems.push([line, `a stray _ or * next to \`${k.content}\` (escape it as \\* or \\_)`]);
    }
  });
}

/** The problems of one Markdown text, as [0-based line, message]. */
function check(text) {
  const lines = text.split('\n');
  const problems = [];
  // Inline tokens of table cells carry no line: they report the line of the nearest block before them.
  let line = 0;
  for (const tok of md.parse(text, {})) {
    if (tok.map) line = tok.map[0];
    if (tok.type === 'fence' && tok.map) checkFence(tok, lines, problems);
    else if (tok.type === 'table_open' && tok.map) checkTable(tok, lines, problems);
    else if (tok.type === 'inline') checkInline(tok, line, problems);
  }
  return problems.sort((a, b) => a[0] - b[0]);
}

const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : execFileSync('git', ['ls-files', '*.md'], { encoding: 'utf8' }).split('\n').filter(Boolean);
let failed = 0;
for (const file of files) {
  for (const [line, message] of check(readFileSync(file, 'utf8'))) {
    console.error(`${relative(process.cwd(), file)}:${line + 1}: ${message}`);
    failed++;
  }
}
if (failed > 0) {
  console.error(`check-markdown: ${failed} problem(s) in ${files.length} file(s)`);
  process.exit(1);
}
