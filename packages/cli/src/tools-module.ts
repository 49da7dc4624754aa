import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errorMessage, type ToolExecutor } from '@switchyard/protocol';

/** What `--tools` accepts, in the words of its error message. */
export const TOOLS_MODULE_SHAPES =
  'a default export that is an executor, an array of executors, or a function returning either (called with no arguments, awaited); ' +
  'or named exports that are executors or arrays of executors';

function isExecutor(value: unknown): value is ToolExecutor {
  const candidate = value as Partial<ToolExecutor> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.handle === 'function' && typeof candidate.spec === 'object' && typeof candidate.name?.name === 'string';
}

/** The executors of one export value, or `undefined` when it holds none. */
function executorsOf(value: unknown): ToolExecutor[] | undefined {
  if (isExecutor(value)) return [value];
  if (Array.isArray(value) && value.length > 0 && value.every(isExecutor)) return value;
  return undefined;
}

/**
 * Where `specifier` is: a path (relative to `cwd`) when one exists there or it starts with `.` or
 * `/`, else a package name resolved from `cwd` as Node resolves a dependency of a file there.
 */
function locate(specifier: string, cwd: string): string {
  const asPath = isAbsolute(specifier) ? specifier : resolve(cwd, specifier);
  if (specifier.startsWith('.') || isAbsolute(specifier) || existsSync(asPath)) return asPath;
  return createRequire(join(cwd, 'package.json')).resolve(specifier);
}

/**
 * Loads the executors a module exports (see {@link TOOLS_MODULE_SHAPES}): the default export
 * first, else every named export holding executors, in export order. Throws an Error with a
 * one-line reason naming the module when it cannot be loaded or exports none.
 */
export async function loadToolsModule(specifier: string, cwd: string): Promise<ToolExecutor[]> {
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(locate(specifier, cwd)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`--tools ${specifier}: cannot load the module: ${errorMessage(error)}`);
  }
  let main = namespace.default;
  // A CommonJS module's exports arrive as the default export; read its members as named exports.
  if (main !== undefined && !isExecutor(main) && !Array.isArray(main) && typeof main !== 'function' && typeof main === 'object' && main !== null) {
    namespace = { ...(main as Record<string, unknown>), ...namespace, default: undefined };
    main = undefined;
  }
  if (typeof main === 'function' && !isExecutor(main)) {
    try {
      main = await (main as () => unknown)();
    } catch (error) {
      throw new Error(`--tools ${specifier}: the default export (a factory) threw: ${errorMessage(error)}`);
    }
  }
  if (main !== undefined) {
    const fromDefault = executorsOf(main);
    if (!fromDefault) throw new Error(`--tools ${specifier}: the default export holds no executor; expected ${TOOLS_MODULE_SHAPES}`);
    return fromDefault;
  }
  const named = Object.entries(namespace).flatMap(([key, value]) => (key === 'default' ? [] : (executorsOf(value) ?? [])));
  if (named.length === 0) throw new Error(`--tools ${specifier}: the module exports no executor; expected ${TOOLS_MODULE_SHAPES}`);
  return [...new Set(named)];
}
