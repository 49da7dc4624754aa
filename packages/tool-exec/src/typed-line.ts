/** The line typed into a tty session so far (since its last line end), as a line editor shows it. */
export interface TypedLine {
  readonly text: string;
  /** Keys were typed into it whose effect is not followed here (escape sequences, ^A, ^K, ^Y, ^R, …). */
  readonly opaque: boolean;
}

export const EMPTY_LINE: TypedLine = { text: '', opaque: false };

/** What typing `chars` into `line` gives. */
export interface Typed {
  /** The text hooks see: every line this write ends (with its `\n`) and the unfinished rest, edits applied. */
  readonly shown: string;
  /** True when the write ends a line that was edited with keys not followed here. */
  readonly submitsOpaque: boolean;
  /** The unfinished line after the write. */
  readonly after: TypedLine;
}

const ERASE_CHAR = new Set(['\b', '\x7f']);

function eraseWord(text: string): string {
  return text.replace(/\s+$/, '').replace(/\S+$/, '');
}

/**
 * Follows a terminal line editor far enough that a hook sees what a write submits: text
 * accumulates across writes until a line end (`\r`, `\n`); backspace / DEL erase a character,
 * ^U the line, ^W a word, ^C discards the line. Any other control key (escape sequences for
 * arrows, ^A, ^E, ^K, ^Y, ^R, …) may move the cursor or recall text, so the line becomes opaque:
 * a write that ends an opaque line is refused by the handler. A tab is text.
 */
export function typeInto(line: TypedLine, chars: string): Typed {
  let text = line.text;
  let opaque = line.opaque;
  let shown = '';
  let submitsOpaque = false;
  for (const char of chars) {
    if (char === '\r' || char === '\n') {
      if (opaque) submitsOpaque = true;
      shown += `${text}\n`;
      text = '';
      opaque = false;
    } else if (ERASE_CHAR.has(char)) text = [...text].slice(0, -1).join('');
    else if (char === '\x15') text = '';
    else if (char === '\x17') text = eraseWord(text);
    else if (char === '\x03') {
      text = '';
      opaque = false;
    } else if (char !== '\t' && char.charCodeAt(0) < 0x20) opaque = true;
    else text += char;
  }
  return { shown: shown + text, submitsOpaque, after: { text, opaque } };
}

/** The refusal of a write that ends an opaque line (nothing is sent). */
export const OPAQUE_LINE_MESSAGE =
  'write_stdin failed: this input ends a line edited with keys hooks cannot follow (escape sequences or control keys other than backspace, ^U, ^W, ^C); nothing was sent. Clear the line with ^C (\\u0003), then send the whole line as plain text';
