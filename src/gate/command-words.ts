/**
 * The reference command of gate --against, given as one string, split into its words as a POSIX shell would split a
 * simple command: blanks separate, single quotes keep everything, double quotes keep all but \" and \\, a backslash
 * outside quotes escapes the next character. The words are run without a shell (as the candidate after -- is), so shell
 * syntax outside quotes (pipes, ;, &&, redirections, $ expansions) is refused, not passed on as words the job would not
 * expect.
 */
import { ExitCode, UserError } from '../errors.js';
import { AGAINST_TEXT } from './against-text.js';

const SHELL_SYNTAX = /[|;&<>$`(){}*?]/;

/** The words of `text`; a one-line UserError (exit 2) for shell syntax, an unclosed quote or no word. */
export function commandWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (SHELL_SYNTAX.test(c)) {
      throw new UserError(AGAINST_TEXT.shellSyntax(c), ExitCode.Usage);
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote !== null) throw new UserError(AGAINST_TEXT.unclosedQuote, ExitCode.Usage);
  if (word !== null) words.push(word);
  if (words.length === 0) throw new UserError(AGAINST_TEXT.againstEmpty, ExitCode.Usage);
  return words;
}
