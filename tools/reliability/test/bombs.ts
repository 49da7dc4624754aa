// The hostile one-line cells of runtime-bombs.test.ts (run by fixtures/bomb-host.ts, one host process each).

const NESTED_ARROWS = (() => {
  let source = '0';
  for (let i = 0; i < 26; i++) source = `(a${i} = ${source}) => 0`;
  return `const typed: number = 1;\nconst f = ${source};\ntext(typed);`;
})();

/**
 * The hostile one-line cells (plus a yield_control() flood). Those expected to fail run with a 50 s
 * yield (they answer as soon as they fail, well within 60 s even on a loaded machine); those that
 * run until the 60 s CPU limit keep the default 10 s yield and are terminated after it.
 */
export const BOMBS: Record<string, string> = {
  'string-concat': `let s="x".repeat(1<<20); let r=""; for(let i=0;i<500;i++) r = r + s + i; text(r.split("").length)`,
  'array-4e7': `text(new Array(4e7).fill(1.5).length)`,
  'map-2^23': `const m = new Map(); for (let i = 0; i < 2 ** 23; i++) m.set(i, i); text(m.size)`,
  'set-2^23': `const s = new Set(); for (let i = 0; i < 2 ** 23; i++) s.add(i); text(s.size)`,
  'object-8M-keys': `const o = {}; for (let i = 0; i < 8e6; i++) o['k' + i] = i; text(Object.keys(o).length)`,
  'empty-text-flood': `for(;;) text("")`,
  'timer-flood': `for(;;){const t=setTimeout(()=>{},1e9);clearTimeout(t)}`,
  'notify-flood': `for (let i=0;i<2e6;i++) notify("x")`,
  'yield-flood': `for(;;) yield_control()`,
  'huge-parallel-arguments': `const s = 'x'.repeat(16e6); await Promise.all(Array.from({ length: 64 }, () => tools.echo({ s }))); text('sent')`,
  'typescript-nested-arrows': NESTED_ARROWS,
};

/** Bombs that run until a CPU limit (the default yield answers first; the cell is then terminated). */
export const RUNNING_BOMBS = new Set(['timer-flood', 'yield-flood', 'typescript-nested-arrows']);

