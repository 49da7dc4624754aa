/**
 * The reference for nested calls: raw isolated-vm with the technique the runtime uses (async entries
 * on isolated-vm's thread pool, an ignored Callback out, Reference.apply back), with nothing else —
 * no prelude, no cell ids, no limits, no router. `tool` runs on the host for every `tool()` call.
 */
import ivm from 'isolated-vm';

export type RawTool = (input: unknown) => Promise<unknown>;

const noop: RawTool = async () => null;

/**
 * Runs `source` as a module in a fresh isolate; resolves with the first `text(value)`. The host
 * tool is the global function `name` (default `tool`).
 */
export async function rawBridgeRun(source: string, tool: RawTool = noop, name = 'tool'): Promise<string> {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  try {
    const context = await isolate.createContext();
    let finish!: (text: string) => void;
    const finished = new Promise<string>((resolve) => (finish = resolve));
    let resolver: ivm.Reference | undefined;
    const send = new ivm.Callback(
      (kind: string, id: number, payload: string) => {
        if (kind !== 'call') return finish(payload);
        void tool(JSON.parse(payload)).then((result) => resolver!.apply(undefined, [id, JSON.stringify(result ?? null)]).catch(() => {}));
      },
      { ignored: true },
    );
    resolver = (await context.evalClosure(
      `const send = $0; const pending = new Map(); let seq = 0;
       globalThis[${JSON.stringify(name)}] = (input) => new Promise((resolve) => { const id = ++seq; pending.set(id, resolve); send('call', id, JSON.stringify(input ?? {})); }).then(JSON.parse);
       globalThis.text = (value) => send('done', 0, String(value));
       return (id, json) => { const resolve = pending.get(id); pending.delete(id); resolve(json); };`,
      [send],
      { result: { reference: true } },
    )) as ivm.Reference;
    const module = await isolate.compileModule(source, { filename: 'exec_main.mjs' });
    await module.instantiate(context, () => {
      throw new Error('no imports');
    });
    void module.evaluate().catch(() => {});
    return await finished;
  } finally {
    isolate.dispose();
  }
}

/** The floor of "run a snippet": a fresh isolate, a context and one eval, then dispose. */
export async function rawEval(source: string): Promise<unknown> {
  const isolate = new ivm.Isolate({ memoryLimit: 128 });
  try {
    const context = await isolate.createContext();
    return await context.eval(source, { copy: true });
  } finally {
    isolate.dispose();
  }
}
