/**
 * `npm run metrics:source [-- dir ...]`: the honesty figures of issue 29 for src/ (or the folders given), as the
 * TypeScript parser and scanner read them:
 *   casts        `x as T` (not `as const`), and of them `as unknown as T`   goal: <= 100, none outside a boundary helper
 *   non-null     `x!`                                                       goal: <= 5
 *   comments     characters of comments / characters of source               goal: <= 14%
 *                (every comment range before and after every token, as ts.getLeadingCommentRanges gives them: a
 *                scanner run alone over the text loses its place after a template literal with `${}`)
 * `--files` also lists each file's casts, non-null assertions and comment share.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The characters of the comments of a TypeScript source, each comment counted once. */
export function commentChars(text, fileName = 'file.ts') {
  const seen = new Set();
  let chars = 0;
  const count = (ranges) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      chars += r.end - r.pos;
    }
  };
  const visit = (node) => {
    count(ts.getLeadingCommentRanges(text, node.pos));
    count(ts.getTrailingCommentRanges(text, node.end));
    // getChildren includes the tokens (and the end-of-file token, whose leading comments end the file).
    for (const child of node.getChildren()) visit(child);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true));
  return chars;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();

function main() {
  const args = process.argv.slice(2);
  const perFile = args.includes('--files');
  const dirs = args.filter((a) => !a.startsWith('--'));

  const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);

  const total = { casts: 0, unknownCasts: 0, nonNull: 0, commentChars: 0, chars: 0 };
  const rows = [];
  for (const file of (dirs.length > 0 ? dirs : ['src']).flatMap(walk)) {
    const text = fs.readFileSync(file, 'utf8');
    const f = { casts: 0, unknownCasts: 0, nonNull: 0, commentChars: 0, chars: text.length };
    const visit = (node) => {
      if (ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.typeName.getText() === 'const')) {
        f.casts++;
        if (ts.isAsExpression(node.expression) && node.expression.type.kind === ts.SyntaxKind.UnknownKeyword) f.unknownCasts++;
      }
      if (ts.isNonNullExpression(node)) f.nonNull++;
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
    f.commentChars = commentChars(text, file);
    for (const k of Object.keys(total)) total[k] += f[k];
    rows.push([file, f]);
  }
  const pct = (a, b) => `${(100 * a / Math.max(b, 1)).toFixed(1)}%`;
  if (perFile) {
    for (const [file, f] of rows.sort((a, b) => b[1].casts - a[1].casts || b[1].commentChars - a[1].commentChars)) {
      console.log(`${String(f.casts).padStart(3)} casts ${String(f.nonNull).padStart(2)} ! ${pct(f.commentChars, f.chars).padStart(6)} comments  ${file}`);
    }
  }
  console.log(`casts ${total.casts} (as unknown as: ${total.unknownCasts}; goal <= 100), non-null ${total.nonNull} (goal <= 5), ` +
    `comments ${pct(total.commentChars, total.chars)} of ${total.chars} characters (goal <= 14%)`);
}
