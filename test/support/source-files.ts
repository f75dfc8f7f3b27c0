// The repository's own source files and the module specifiers each names, read with the TypeScript
// parser: what the import-graph, emulators-apart and provider-kinds tests walk.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export const ROOT = join(__dirname, '..', '..');

/** The .ts/.tsx files under a repository path (or the path itself), tests, declarations, node_modules and dist aside. */
export function sourceFiles(path: string): string[] {
  if (!existsSync(join(ROOT, path))) return [];
  if (!statSync(join(ROOT, path)).isDirectory()) return [path];
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, path)).sort()) {
    const child = `${path}/${name}`;
    if (statSync(join(ROOT, child)).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist') out.push(...sourceFiles(child));
    } else if (/\.tsx?$/.test(name) && !/\.(test|d)\.tsx?$/.test(name)) out.push(child);
  }
  return out;
}

/** Every module specifier a file names: imports, re-exports, import() and require() calls, import types. */
export function specifiers(path: string, source: string): string[] {
  const file = ts.createSourceFile(
    path,
    source,
    ts.ScriptTarget.ES2022,
    false,
    path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      out.push(node.moduleReference.expression.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) out.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}
