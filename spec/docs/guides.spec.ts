import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const GUIDES = readdirSync(join(ROOT, 'docs'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => join(ROOT, 'docs', file));
const PAGES = [join(ROOT, 'README.md'), ...GUIDES];

/** Markdown links and images outside code: `[text](target)`. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/^#+ (.+)$/gm)].map((match) => anchorOf(match[1]));
}

describe('README and guides', () => {
  it.each(PAGES.map((page) => [relative(ROOT, page), page]))(
    '%s links only to files and headings that exist',
    (_, page) => {
      const broken: string[] = [];
      for (const link of linksOf(readFileSync(page, 'utf8'))) {
        if (/^[a-z]+:/.test(link)) continue; // a web address
        const [path, anchor] = link.split('#');
        const target = path === '' ? page : join(dirname(page), path);
        if (!existsSync(target)) broken.push(link);
        else if (anchor !== undefined && !anchorsOf(readFileSync(target, 'utf8')).includes(anchor))
          broken.push(link);
      }
      expect(broken).toEqual([]);
    },
  );

  it.each(GUIDES.map((guide) => [relative(ROOT, guide), guide]))(
    '%s starts with a runnable example it names',
    (_, guide) => {
      const opening = readFileSync(guide, 'utf8').split('\n## ')[0];
      const runnable = linksOf(opening).filter((link) => /^\.\.\/(examples|spec)\/.+\.ts$/.test(link));
      expect(runnable.length).toBeGreaterThan(0);
    },
  );

  it('the testing guide shows spec/examples/testing-with-marbles.spec.ts as it is', () => {
    const guide = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8');
    const spec = readFileSync(join(ROOT, 'spec', 'examples', 'testing-with-marbles.spec.ts'), 'utf8');
    expect(guide.split('```ts\n')[1].split('```')[0]).toBe(spec);
  });
});
