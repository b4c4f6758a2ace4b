/**
 * The words a user is shown live in text modules (`<area>-text.ts`, beside
 * their code; STYLE.md, "Words"): the code throws
 * `new UserError(AREA_TEXT.name(args), ExitCode.X)`. This test reads every
 * .ts file under src/ and fails on a `new UserError(` (or errors.ts's
 * `inputError(`, `valueError(`) whose message is written in place: a string or
 * template literal (or one joined with + or chosen by ?:) outside a text
 * module.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// Run from dist/test/: the repository root is two folders up.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// src/errors.ts's two `new UserError(message, ...)` are the generic wrappers inputError and valueError, which take
// the message from their caller, so they build no message of their own and the check never flags them.

/** Files named like a text module that are not one: read-text.ts reads kernel files. */
const NOT_TEXT_MODULES = new Set(['src/system/kernel/read-text.ts']);

/** Every .ts file under `dir`, as a path from the repository root. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path).split('\\').join('/')] : [];
  });
}

/**
 * Whether `node` is, or is built of, a string or template literal: also through a `const` of the same file that
 * holds one (`const why = '...'; throw new UserError(why)`), named in `consts`.
 */
function holdsLiteral(node: ts.Expression, consts: ReadonlyMap<string, ts.Expression[]>): boolean {
  const holds = (child: ts.Expression): boolean => holdsLiteral(child, consts);
  if (ts.isStringLiteral(node) || ts.isTemplateLiteral(node)) return true;
  if (ts.isParenthesizedExpression(node)) return holds(node.expression);
  if (ts.isBinaryExpression(node)) return holds(node.left) || holds(node.right);
  if (ts.isConditionalExpression(node)) return holds(node.whenTrue) || holds(node.whenFalse);
  if (ts.isIdentifier(node)) return (consts.get(node.text) ?? []).some(holds);
  return false;
}

/** The initialisers of the file's `const` declarations, by name (a name declared twice has both). */
function constInitialisers(source: ts.SourceFile): Map<string, ts.Expression[]> {
  const consts = new Map<string, ts.Expression[]>();
  const visit = (node: ts.Node): void => {
    const isConst = (declaration: ts.VariableDeclaration): boolean =>
      ts.isVariableDeclarationList(declaration.parent) && (declaration.parent.flags & ts.NodeFlags.Const) !== 0;
    if (ts.isVariableDeclaration(node) && isConst(node) && ts.isIdentifier(node.name) && node.initializer) {
      consts.set(node.name.text, [...(consts.get(node.name.text) ?? []), node.initializer]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return consts;
}

/** errors.ts's shorthands that build a UserError from the message they are given. */
const USER_ERROR_SHORTHANDS = new Set(['inputError', 'valueError']);

/** Whether `node` builds a UserError from its first argument: `new UserError(...)`, `inputError(...)`, `valueError(...)`. */
function buildsUserError(node: ts.Node): node is ts.NewExpression | ts.CallExpression {
  if (ts.isNewExpression(node)) return ts.isIdentifier(node.expression) && node.expression.text === 'UserError';
  return (
    ts.isCallExpression(node) && ts.isIdentifier(node.expression) && USER_ERROR_SHORTHANDS.has(node.expression.text)
  );
}

/** Each user error built in `text`: its line and whether its message is written in place. */
function userErrors(path: string, text: string): { line: number; inline: boolean }[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found: { line: number; inline: boolean }[] = [];
  const consts = constInitialisers(source);
  const visit = (node: ts.Node): void => {
    if (buildsUserError(node)) {
      const message = node.arguments?.[0];
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ line, inline: message !== undefined && holdsLiteral(message, consts) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const isTextModule = (path: string): boolean => path.endsWith('-text.ts') && !NOT_TEXT_MODULES.has(path);

test('the check finds inline messages, and lets messages from text modules and parameters through', () => {
  const sample = [
    "throw new UserError('no profile here', ExitCode.MissingInput);",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text the check reads, not a template
    'throw new UserError(`--cpus ${n}: too many`);',
    "throw new UserError('a' + why);",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text the check reads, not a template
    "throw new UserError(ok ? 'a' : `b ${c}`);",
    'throw new UserError(STORE_TEXT.missing(path), ExitCode.MissingInput);',
    'return new UserError(message, exitCode);',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text the check reads, not a template
    "throw valueError(`${what} '${text}' must be at least one byte`);",
    'throw inputError(MESSAGES.missing(flag, root));',
    "const why = 'a';",
    'throw new UserError(why);',
  ].join('\n');
  assert.deepEqual(
    userErrors('sample.ts', sample).map((e) => e.inline),
    [true, true, true, true, false, false, true, false, true],
  );
});

test('user errors take their messages from text modules', () => {
  const files = sourceFiles(join(ROOT, 'src'));
  let constructed = 0;
  const inline: string[] = [];
  for (const path of files) {
    const errors = userErrors(path, readFileSync(join(ROOT, path), 'utf8'));
    constructed += errors.length;
    if (isTextModule(path)) continue;
    for (const error of errors.filter((e) => e.inline)) inline.push(`${path}:${error.line}`);
  }
  // Not a pass by finding nothing: src/ builds many user errors.
  assert.ok(constructed >= 50, `found only ${constructed} 'new UserError(' in ${files.length} files under ${ROOT}src`);
  assert.deepEqual(
    inline,
    [],
    'a message written in place: put it in the text module beside the code (<area>-text.ts) and throw ' +
      'new UserError(AREA_TEXT.name(args), ExitCode.X)',
  );
});
