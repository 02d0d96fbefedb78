import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// docs/reference/options.md, generated from the doc comments of every public options interface (an
// exported interface whose name ends in `Options`), so that no guide keeps a table of options that can
// drift from the code. The entry points are typedoc.json's, as `npm run docs` reads them.

export const ROOT = join(__dirname, '..', '..');

/** A public options interface and the package entries (`keyed-dispatch/kafka`, …) that export it. */
interface OptionsInterface {
  readonly name: string;
  readonly declaration: ts.InterfaceDeclaration;
  readonly entries: string[];
}

const entryName = (file: string) =>
  file === 'src/index.ts' ? 'keyed-dispatch' : `keyed-dispatch/${file.split('/')[1]}`;

/**
 * Reads only the sources: a file of node_modules is read as an empty module, since parsing the
 * dependencies' types (most of the time) tells nothing about the options' doc comments.
 */
function sourcesOnly(host: ts.CompilerHost): ts.CompilerHost {
  const getSourceFile: ts.CompilerHost['getSourceFile'] = (fileName, version, ...rest) =>
    fileName.includes('/node_modules/')
      ? ts.createSourceFile(fileName, 'export {};', version)
      : host.getSourceFile(fileName, version, ...rest);
  return { ...host, getSourceFile };
}

/** Every public options interface, in the order of the entry points, then by name. */
function optionsInterfaces(): OptionsInterface[] {
  const entryPoints: string[] = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')).entryPoints;
  const options = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noLib: true,
  };
  const program = ts.createProgram({
    rootNames: entryPoints.map((file) => join(ROOT, file)),
    options,
    host: sourcesOnly(ts.createCompilerHost(options)),
  });
  const checker = program.getTypeChecker();
  const byName = new Map<string, OptionsInterface>();
  for (const file of entryPoints) {
    const found: OptionsInterface[] = [];
    const module = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, file)) as ts.SourceFile);
    for (const exported of checker.getExportsOfModule(module as ts.Symbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declaration = symbol.declarations?.find(ts.isInterfaceDeclaration);
      if (declaration === undefined || !exported.name.endsWith('Options')) continue;
      const known = byName.get(exported.name);
      if (known === undefined) found.push({ name: exported.name, declaration, entries: [entryName(file)] });
      else known.entries.push(entryName(file));
    }
    for (const each of found.sort((a, b) => a.name.localeCompare(b.name))) byName.set(each.name, each);
  }
  return [...byName.values()];
}

/** A doc comment on one line (a table cell): list items kept apart by `<br>`, pipes escaped. */
function oneLine(text: string): string {
  return text
    .replace(/\n\s*- /g, '<br>• ')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}

/**
 * Splits a comment's "Default …" sentence (the first sentence that starts with "Default") from the
 * rest: the default, and the meaning without it. A sentence ends at a full stop followed by a space.
 */
export function splitDefault(comment: string): { default: string; meaning: string } {
  const match = /(^|\.\s+)Default:?\s+(.*?)\.(\s+|$)/s.exec(comment);
  if (match === null) return { default: '', meaning: comment };
  const before = comment.slice(0, match.index) + match[1];
  const after = comment.slice(match.index + match[0].length);
  return { default: match[2], meaning: `${before}${after}`.trim() };
}

/** A declaration's doc comment as written (the compiler's reading would end it at a `@` inside code). */
function docOf(node: ts.Node): string {
  const source = node.getSourceFile().text;
  const comment = (ts.getLeadingCommentRanges(source, node.getFullStart()) ?? [])
    .filter((range) => source.startsWith('/**', range.pos))
    .at(-1);
  if (comment === undefined) return '';
  return source
    .slice(comment.pos + 3, comment.end - 2)
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

const anchor = (name: string) => name.toLowerCase();

/** "Also the options of X" for each interface it extends: `Omit<X, 'a' | 'b'>` names what it leaves out. */
function inherited(declaration: ts.InterfaceDeclaration, known: Set<string>): string[] {
  const link = (type: ts.TypeNode | ts.ExpressionWithTypeArguments) => {
    const name = (
      ts.isExpressionWithTypeArguments(type) ? type.expression : (type as ts.TypeReferenceNode).typeName
    )
      .getText()
      .trim();
    return known.has(name) ? `[${name}](#${anchor(name)})` : `\`${name}\``;
  };
  return (declaration.heritageClauses ?? []).flatMap((clause) =>
    clause.types.map((type) => {
      const [base, left] = type.typeArguments ?? [];
      if (type.expression.getText() !== 'Omit' || base === undefined || left === undefined)
        return `Also every option of ${link(type)}.`;
      const names = left
        .getText()
        .split('|')
        .map((name) => `\`${name.trim().replace(/'/g, '')}\``);
      return `Also every option of ${link(base)} but ${names.join(', ')}.`;
    }),
  );
}

function section(each: OptionsInterface, known: Set<string>): string {
  const rows = each.declaration.members.filter(ts.isPropertySignature).map((member) => {
    const { default: value, meaning } = splitDefault(docOf(member));
    const type = (member.type?.getText() ?? 'unknown').replace(/\s+/g, ' ');
    const name = `\`${member.name.getText()}\``;
    const shown = member.questionToken === undefined ? 'required' : oneLine(value);
    return `| ${name} | \`${type.replace(/\|/g, '\\|')}\` | ${shown} | ${oneLine(meaning)} |`;
  });
  const imports = each.entries.map((entry) => `\`${entry}\``).join(', ');
  return [
    `## ${each.name}`,
    '',
    `From ${imports}. ${oneLine(docOf(each.declaration))}`,
    ...inherited(each.declaration, known).map((line) => `\n${line}`),
    '',
    ...(rows.length === 0
      ? []
      : ['| option | type | default | meaning |', '| --- | --- | --- | --- |', ...rows, '']),
  ].join('\n');
}

/** The page, as `npm run reference` writes it. */
export function renderOptionsPage(): string {
  const interfaces = optionsInterfaces();
  const known = new Set(interfaces.map((each) => each.name));
  const byEntry = new Map<string, string[]>();
  for (const each of interfaces) {
    const entry = each.entries[0];
    byEntry.set(entry, [...(byEntry.get(entry) ?? []), `[${each.name}](#${anchor(each.name)})`]);
  }
  return [
    '# Options',
    '',
    `<!-- Generated by \`npm run reference\` from the doc comments in src/ (${relative(ROOT, __filename)}); do not edit. -->`,
    '',
    'Every option of the public API, as its doc comment states it. Invalid values throw a `TypeError` naming the option.',
    '',
    ...[...byEntry].map(([entry, links]) => `- \`${entry}\`: ${links.join(', ')}`),
    '',
    ...interfaces.map((each) => section(each, known)),
  ].join('\n');
}
