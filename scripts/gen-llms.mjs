#!/usr/bin/env node
// Generates docs/llms.txt (an index of the documentation for language models, per llmstxt.org) and
// docs/llms-full.txt (the agent-facing docs in full) from the Markdown docs. With --check it writes nothing and
// fails when either file is not what the docs generate, so `make check` catches a stale copy.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const docs = join(root, 'docs');
// The docs an agent needs in full, in reading order; llms.txt indexes every doc.
const FULL = ['README.md', 'docs/concepts.md', 'docs/history.md', 'docs/mcp.md', 'docs/reference.md'];

function titleAndSummary(text) {
  const lines = text.split('\n');
  const h = lines.findIndex((l) => l.startsWith('# '));
  const title = (lines[h] ?? '# ').slice(2).replace(/`/g, '').trim();
  const para = [];
  for (const l of lines.slice(h + 1)) {
    if (l.trim() === '') {
      if (para.length > 0) break;
      continue;
    }
    if (/^(#|```|\||- |\d+\. )/.test(l)) {
      if (para.length > 0) break;
      continue;
    }
    para.push(l.trim());
  }
  const joined = para.join(' ').replace(/\[([^\]]+)\]\([^)]+\)/g, '$1');
  const sentence = /^(.+?\.)(\s|$)/.exec(joined)?.[1] ?? joined;
  return { title, summary: sentence.length > 240 ? `${sentence.slice(0, 239).trimEnd()}…` : sentence };
}

function generate() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const { summary } = titleAndSummary(readme);
  const pages = (dir) =>
    readdirSync(join(docs, dir))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => join(dir, f));
  const entries = [...pages('.'), ...pages('integrations')].map((f) => ({
    f,
    ...titleAndSummary(readFileSync(join(docs, f), 'utf8')),
  }));
  const index = [
    '# offshoot',
    '',
    `> ${summary}`,
    '',
    "An agent changes a database with the branch loop: fork (offshoot_fork), work in the fork's checkout, checkpoint",
    'when tests pass, roll back when they fail, diff, promote the fork that worked. `offshoot mcp` serves the loop as',
    'MCP tools; main stays protected unless the human starts the server with -allow-force.',
    '',
    '## Docs',
    '',
    ...entries.map((e) => `- [${e.title}](${e.f}): ${e.summary}`),
    '',
    '## Optional',
    '',
    '- [llms-full.txt](llms-full.txt): the README, concepts, the MCP server and the command reference in one file',
    '',
  ].join('\n');
  const full = FULL.map((p) => `<!-- ${p} -->\n\n${readFileSync(join(root, p), 'utf8').trimEnd()}\n`).join('\n');
  return { 'docs/llms.txt': index, 'docs/llms-full.txt': full };
}

const outputs = generate();
if (process.argv.includes('--check')) {
  const stale = Object.entries(outputs).filter(([p, text]) => {
    try {
      return readFileSync(join(root, p), 'utf8') !== text;
    } catch {
      return true;
    }
  });
  if (stale.length > 0) {
    console.error(`llms: ${stale.map(([p]) => p).join(', ')} out of date; run 'make llms' and commit the result`);
    process.exit(1);
  }
  console.log('llms: docs/llms.txt and docs/llms-full.txt are current');
} else {
  for (const [p, text] of Object.entries(outputs)) writeFileSync(join(root, p), text);
  console.log('llms: wrote docs/llms.txt and docs/llms-full.txt');
}
