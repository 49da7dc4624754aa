/** Where to look for `--no-node-snapshot` (defaults: this process). */
export interface NodeSnapshotCheckOptions {
  execArgv?: readonly string[];
  nodeOptions?: string;
  nodeVersion?: string;
}

/**
 * Returns a one-paragraph explanation when the current Node needs `--no-node-snapshot` for
 * isolated-vm and was started without it, or `undefined` when all is well.
 */
export function nodeSnapshotFlagProblem(options: NodeSnapshotCheckOptions = {}): string | undefined {
  const version = options.nodeVersion ?? process.versions.node;
  const major = Number.parseInt(version, 10);
  if (!(major >= 20)) return undefined;
  const execArgv = options.execArgv ?? process.execArgv;
  const nodeOptions = options.nodeOptions ?? process.env.NODE_OPTIONS ?? '';
  const flagged = execArgv.includes('--no-node-snapshot') || nodeOptions.split(/\s+/).includes('--no-node-snapshot');
  if (flagged) return undefined;
  return (
    `@switchyard/code-mode-runtime: Node ${version} was started without --no-node-snapshot, which isolated-vm requires on Node >= 20 ` +
    '(isolates can crash the process without it). Start node with `node --no-node-snapshot …` or set NODE_OPTIONS=--no-node-snapshot.'
  );
}
