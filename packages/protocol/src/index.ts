/**
 * @switchyard/protocol — the contract every Switchyard package speaks: types, error codes and
 * `SwitchyardError`, guards, the wire types. Zero runtime dependencies and platform-neutral (no
 * Node built-ins); the helpers that implement it live in `@switchyard/kit`. The contract package is
 * the one place `export *` is used.
 */
export * from './json';
export * from './json-bounds';
export * from './tool-name';
export * from './tool-spec';
export * from './wire';
export * from './payload';
export * from './errors';
export * from './output';
export * from './providers';
export * from './context';
export * from './call';
export * from './hooks';
export * from './executor';
export * from './compatibility';
export * from './events';
export * from './code-mode';
export * from './code-mode-cell';
export * from './cell-journal';
export * from './session-store';
export * from './model';
export * from './tool-budget';
export * from './mcp-marker';
export { VERSION } from './version';
