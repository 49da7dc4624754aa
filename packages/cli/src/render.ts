/** Minimal terminal rendering: colors only on a terminal (and never with NO_COLOR). */
export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

export function createStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (text: string) => (enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text);
  return { bold: wrap(1, 22), dim: wrap(2, 22), green: wrap(32, 39), red: wrap(31, 39), yellow: wrap(33, 39), cyan: wrap(36, 39) };
}

/** True when colors should be used on `stream`. */
export function colorsFor(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR;
}

const ANSI = /\u001b\[[0-9;]*m/g;

/** Renders rows as a left-aligned table with a header and a rule. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const width = (text: string) => text.replace(ANSI, '').length;
  const widths = header.map((title, i) => Math.max(width(title), ...rows.map((row) => width(row[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell + ' '.repeat(widths[i] - width(cell)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Shortens long text for a transcript line. */
export function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
