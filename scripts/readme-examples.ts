/**
 * The README's real outputs: a block between `<!-- example: NAME -->` and `<!-- /example -->` holds
 * the rendered example NAME (scripts/doc-examples.ts) in a ```text fence.
 */
const BLOCK = /<!-- example: (\w+) -->\n[\s\S]*?<!-- \/example -->/g;

/** The names of the examples `markdown` shows, in order. */
export function exampleNames(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK)].map((m) => m[1]!);
}

/** `markdown` with each example block's text replaced by `examples[NAME]`; an unknown name is an error. */
export function spliceExamples(markdown: string, examples: Record<string, string>): string {
  return markdown.replace(BLOCK, (_, name: string) => {
    const text = examples[name];
    if (text === undefined) throw new Error(`no example named '${name}' (scripts/doc-examples.ts)`);
    return `<!-- example: ${name} -->\n\`\`\`text\n${text}\n\`\`\`\n<!-- /example -->`;
  });
}
