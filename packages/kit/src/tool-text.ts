/** Every line terminator of TypeScript and JavaScript (CRLF, CR, U+2028, U+2029) and NEL, which some renderers end lines on. */
const LINE_TERMINATORS = /\r\n|[\r\u2028\u2029\u0085]/g;
/** A run of three or more backticks or tildes: what opens or closes a markdown code block. */
const FENCE_RUN = /`{3,}|~{3,}/g;

/**
 * A tool's (or a namespace's) own text as it may enter a description or a declaration the host
 * composes: every line terminator becomes `\n` (a `//` comment line of a declaration ends only where
 * the renderer ended it, never at a lone CR or a U+2028 inside the text), and each character of a
 * run of three or more backticks or tildes is escaped with a backslash (`\`\`\``), so the text cannot
 * open or close a code block of the description around it. The words stay as the tool wrote them.
 */
export function safeToolText(text: string): string {
  return text.replace(LINE_TERMINATORS, '\n').replace(FENCE_RUN, (run) => run.replace(/./g, (char) => `\\${char}`));
}

/** `JSON.stringify` of a value for TypeScript source, with U+2028 / U+2029 escaped (JSON leaves them raw). */
export function sourceLiteral(value: unknown): string | undefined {
  return JSON.stringify(value)?.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
