/**
 * @switchyard/protocol — the vocabulary and contracts every Switchyard package speaks.
 * Zero runtime dependencies. The contract package is the one place `export *` is used.
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
export * from './events';
export * from './code-mode';
export * from './code-mode-cell';
export * from './flat-tools';
export * from './model';
export * from './truncate';
export * from './code-mode-declaration';
export * from './tool-budget';
export * from './arguments';
export * from './define';
export * from './standard-schema';
export * from './options';
export * from './backoff';
export * from './event-hub';
export { VERSION } from './version';
