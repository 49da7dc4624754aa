import type { ToolMode } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { builtinTools } from './builtins';
import { createStyle, table, type Style } from './render';

export interface PlanCommandOptions {
  mode: ToolMode;
  json: boolean;
  cwd: string;
  color: boolean;
}

/** `switchyard plan`: the plan of the built-in tools for one step, as a table or JSON. */
export async function planCommand(options: PlanCommandOptions, write: (text: string) => void): Promise<number> {
  const builtins = builtinTools(options.cwd);
  const session = createSession({ toolMode: options.mode, tools: builtins.tools, cwd: options.cwd });
  try {
    const turn = session.beginTurn();
    const step = await turn.step();
    const rows = step.plan.describe();
    if (options.json) {
      write(`${JSON.stringify({ mode: options.mode, tools: step.tools, rows, warnings: step.plan.warnings }, null, 2)}\n`);
    } else {
      write(`${planTable(rows, createStyle(options.color))}\n`);
    }
    await turn.end();
    return 0;
  } finally {
    await session.shutdown();
    await builtins.exec.shutdown();
  }
}

/** The plan rows as a table: the model's view and the host's view side by side. */
export function planTable(
  rows: ReadonlyArray<{ name: string; kind: string; exposure: string; visible: boolean; registered: boolean; callableFromCode: boolean }>,
  style: Style,
): string {
  const mark = (on: boolean) => (on ? style.green('yes') : style.dim('no'));
  return table(
    ['tool', 'kind', 'exposure', 'model sees', 'host runs', 'from code'],
    rows.map((row) => [style.bold(row.name), row.kind, row.exposure, mark(row.visible), mark(row.registered), mark(row.callableFromCode)]),
  );
}
