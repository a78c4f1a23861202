import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { commentChars } from '../scripts/source-metrics.mjs';

describe('metrics:source comment count', () => {
  it('counts a comment after a template literal with ${}, which a scanner run alone over the text misses', () => {
    const comment = '// after the template';
    const text = `const a = \`x \${1 + 2} y\`;\n${comment}\nconst b = 1;\n`;
    expect(commentChars(text)).toBe(comment.length);
  });

  it('counts each comment once: leading, trailing, block, and at the end of the file', () => {
    const comments = ['/** doc */', '// trailing', '/* inner */', '// last'];
    const text = `${comments[0]}\nexport const a = 1; ${comments[1]}\nconst b = ${comments[2]} 2;\n${comments[3]}\n`;
    expect(commentChars(text)).toBe(comments.join('').length);
  });

  it('does not count comment-like text inside strings and templates', () => {
    const text = 'const u = "http://x"; const t = `/* no */ $' + '{"// no"}`;\n';
    expect(commentChars(text)).toBe(0);
  });
});
