import type ivm from 'isolated-vm';

let loaded: Promise<typeof ivm> | undefined;

/**
 * isolated-vm, loaded on first use: a host whose cells run in worker processes never loads the
 * native module (nor needs `--no-node-snapshot`) in its own process.
 */
export function loadIsolatedVm(): Promise<typeof ivm> {
  loaded ??= import('isolated-vm').then((module) => ((module as { default?: typeof ivm }).default ?? (module as unknown as typeof ivm)));
  return loaded;
}
