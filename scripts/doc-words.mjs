// Counts the hand-written docs: README.md and docs/*.md (docs/reference/ is generated and not counted).
//
// Usage: npm run doc-words [-- --json] [-- --root DIR]   (DIR: another checkout; default this one)
//
// - Words are counted as `wc -w` counts them: runs of non-space characters, code included.
// - Size is in KB of 1,024 bytes; the longest hand-written file is reported.
// - The eight everyday questions: each is answered in one guide, and README.md links to the answer.
//   A question's link is README's first link to its guide whose heading anchor is not another
//   question's (Kafka's "Scaling out", `#scaling-out`, is question 8; any other link to kafka.md is
//   question 1); a link with an anchor is preferred to one without. From the heading the link names
//   (the top of the guide when it names none), the words before the answer are those of the lines up
//   to the first code fence (```), the heading itself left out: a guide opens with its answer's snippet.
//
// The targets (issue #46): at most 12,000 words in all, no file above 12 KB, at most 300 words before
// each answer. spec/docs/words.spec.ts checks them.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const QUESTIONS = [
  { question: 'consume Kafka with per-key order, commit after handling', guide: 'docs/kafka.md' },
  { question: 'a handler throws; dead-lettering', guide: 'docs/failure-policy.md' },
  { question: 'stopping on SIGTERM', guide: 'docs/runtime.md' },
  { question: 'tuning the window', guide: 'docs/tuning.md' },
  { question: 'marble tests', guide: 'docs/testing.md' },
  { question: 'CPU-heavy handlers on threads', guide: 'docs/threads.md' },
  { question: 'seeing it in production', guide: 'docs/operations.md' },
  { question: 'scaling out', guide: 'docs/kafka.md', anchor: 'scaling-out' },
];

const words = (text) => text.split(/\s+/).filter((word) => word !== '').length;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

/** README's links into docs/, outside code: `{ guide, anchor }` in the order they appear. */
function readmeLinks(readme) {
  const prose = readme.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\((docs\/[^)#\s]+\.md)(?:#([^)\s]+))?\)/g)].map((match) => ({
    guide: match[1],
    anchor: match[2] ?? null,
  }));
}

/** Words from the heading of `anchor` (or the top) to the first code fence after it; null if no heading has it. */
function wordsBeforeAnswer(markdown, anchor) {
  const lines = markdown.split('\n');
  let start = 0;
  if (anchor !== null) {
    start = lines.findIndex((line) => /^#+ /.test(line) && anchorOf(line.replace(/^#+ /, '')) === anchor) + 1;
    if (start === 0) return null;
  }
  const fence = lines.findIndex((line, index) => index >= start && line.startsWith('```'));
  return words(lines.slice(start, fence === -1 ? lines.length : fence).join('\n'));
}

export function count(root = ROOT) {
  const read = (file) => readFileSync(join(root, file), 'utf8');
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .sort()
      .map((file) => `docs/${file}`),
  ].map((file) => ({ file, words: words(read(file)), kb: Buffer.byteLength(read(file)) / 1024 }));
  const links = readmeLinks(read('README.md'));
  const claimed = new Set(QUESTIONS.filter((q) => q.anchor).map((q) => `${q.guide}#${q.anchor}`));
  const questions = QUESTIONS.map(({ question, guide, anchor }) => {
    const candidates = links.filter((link) =>
      anchor ? link.anchor === anchor : !claimed.has(`${link.guide}#${link.anchor}`),
    );
    const ofGuide = candidates.filter((link) => link.guide === guide);
    const link = ofGuide.find((each) => each.anchor !== null) ?? ofGuide[0];
    if (link === undefined) return { question, link: null, wordsBefore: null };
    const target = link.anchor === null ? link.guide : `${link.guide}#${link.anchor}`;
    return { question, link: target, wordsBefore: wordsBeforeAnswer(read(link.guide), link.anchor) };
  });
  const longest = files.reduce((a, b) => (b.kb > a.kb ? b : a));
  return { files, total: files.reduce((sum, f) => sum + f.words, 0), longest, questions };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--root');
  const counted = count(at === -1 ? ROOT : process.argv[at + 1]);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(counted));
  } else {
    for (const { file, words: n, kb } of counted.files)
      console.log(`${String(n).padStart(6)}  ${kb.toFixed(1).padStart(5)} KB  ${file}`);
    console.log(`${String(counted.total).padStart(6)}  words in all`);
    console.log(`longest: ${counted.longest.file}, ${counted.longest.kb.toFixed(1)} KB`);
    console.log('words before the answer, from the README link:');
    for (const { question, link, wordsBefore } of counted.questions)
      console.log(
        `${String(wordsBefore ?? '—').padStart(6)}  ${question} (${link ?? 'no README link'}${link && wordsBefore === null ? ': no such heading' : ''})`,
      );
  }
}
