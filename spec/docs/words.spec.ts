import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// The targets of issue #46 for the hand-written docs (README.md and docs/*.md), as `npm run doc-words`
// counts them: the rule for each figure is in the header of scripts/doc-words.mjs.

const ROOT = join(__dirname, '..', '..');

interface Counted {
  files: { file: string; words: number; kb: number }[];
  total: number;
  longest: { file: string; kb: number };
  questions: { question: string; link: string | null; wordsBefore: number | null }[];
}

const docWords = (root = ROOT): Counted =>
  JSON.parse(
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'doc-words.mjs'), '--json', '--root', root], {
      encoding: 'utf8',
    }),
  );

const counted = docWords();

describe('the hand-written docs', () => {
  it('hold at most 12,000 words in all', () => {
    expect(counted.total).toBeLessThanOrEqual(12_000);
  });

  it('have no file larger than 12 KB', () => {
    expect(counted.files.filter((f) => f.kb > 12).map((f) => `${f.file}: ${f.kb.toFixed(1)} KB`)).toEqual([]);
  });

  it.each(counted.questions.map((q) => [q.question, q]))(
    'README links to the answer of "%s", at most 300 words after the heading it links to',
    (_, { link, wordsBefore }) => {
      expect(link).not.toBeNull();
      expect(wordsBefore).not.toBeNull();
      expect(wordsBefore).toBeLessThanOrEqual(300);
    },
  );
});

describe('npm run doc-words', () => {
  const dir = mkdtempSync(join(tmpdir(), 'doc-words-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  };

  it("counts words as wc -w does, and from a README link's heading to the first code fence", () => {
    write(
      'README.md',
      'See [Kafka](docs/kafka.md), [order](docs/kafka.md#per-key-order), [scaling](docs/kafka.md#scaling-out).\n',
    );
    write(
      'docs/kafka.md',
      '# Kafka\n\nfour words up here\n\n## Per-key order\n\none two three\n\n```ts\ncode here\n```\n\n## Scaling out\n\nAnswer:\n```\n',
    );
    write('docs/reference/options.md', 'generated words are not counted\n');
    const { files, total, questions } = docWords(dir);
    expect(files.map((f) => [f.file, f.words])).toEqual([
      ['README.md', 4],
      ['docs/kafka.md', 21],
    ]);
    expect(total).toBe(25);
    expect(questions[0]).toMatchObject({ link: 'docs/kafka.md#per-key-order', wordsBefore: 3 });
    expect(questions[7]).toMatchObject({ link: 'docs/kafka.md#scaling-out', wordsBefore: 1 });
    expect(questions[1]).toMatchObject({ link: null, wordsBefore: null });
  });
});
