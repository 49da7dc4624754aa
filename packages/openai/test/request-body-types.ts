// Type-checks request bodies against the official `openai` package's request types
// (`ResponseCreateParamsStreaming`, `ChatCompletionCreateParamsStreaming`) with the TypeScript
// compiler: each body becomes `const body: <Type> = <the JSON>;` in a generated file, so excess
// property checks catch fields the types do not know and missing required fields are errors.
// Types only: the `openai` package is never loaded at run time (it needs Node 22).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** What a recorded body is: a Responses-API or a Chat Completions request. */
export type RequestBodyKind = 'responses' | 'chat';

export interface RecordedBody {
  readonly kind: RequestBodyKind;
  /** Where it was sent (for the failure message): test name and path. */
  readonly label: string;
  readonly body: unknown;
}

/**
 * Fields the clients send on purpose although the official types do not declare them, because
 * servers in the wild need them. Each is removed before the check; keep the reason next to it.
 * A path is a dot list of keys, `[]` meaning every element of an array.
 */
export const TYPE_ALLOW_LIST: ReadonlyArray<{ kind: RequestBodyKind; path: string; why: string }> = [
  {
    kind: 'chat',
    path: 'messages[].tool_calls[].extra_content',
    why: 'Gemini (OpenAI-compatible endpoint) requires its thought signature (`extra_content.google.thought_signature`) echoed on the tool call it came with',
  },
  {
    kind: 'chat',
    path: 'messages[].reasoning_content',
    why: 'DeepSeek, vLLM and llama.cpp take the reasoning of the current turn back on the assistant message of a tool-calling step',
  },
];

const TYPE_OF: Record<RequestBodyKind, string> = {
  responses: 'ResponseCreateParamsStreaming',
  chat: 'ChatCompletionCreateParamsStreaming',
};

const HERE = dirname(fileURLToPath(import.meta.url));
/** The generated file lives beside this one, so `openai` resolves from this package. */
const GENERATED = join(HERE, '__request-bodies__.ts');
const HEADER = [
  "import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';",
  "import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';",
  '',
].join('\n');

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  types: [],
  lib: ['lib.es2022.d.ts'],
};

function removePath(value: unknown, keys: readonly string[]): void {
  if (keys.length === 0 || typeof value !== 'object' || value === null) return;
  const [head, ...rest] = keys;
  const arrayStep = head.endsWith('[]');
  const key = arrayStep ? head.slice(0, -2) : head;
  const record = value as Record<string, unknown>;
  if (!arrayStep) {
    if (rest.length === 0) delete record[key];
    else removePath(record[key], rest);
    return;
  }
  const list = record[key];
  if (!Array.isArray(list)) return;
  for (const element of list) {
    if (rest.length === 0) continue;
    if (rest.length === 1 && !rest[0].endsWith('[]')) delete (element as Record<string, unknown> | null)?.[rest[0]];
    else removePath(element, rest);
  }
}

/** A copy of `body` without the allow-listed fields of its kind. */
export function withoutAllowedExtras(kind: RequestBodyKind, body: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(body)) as unknown;
  for (const entry of TYPE_ALLOW_LIST) if (entry.kind === kind) removePath(copy, entry.path.split('.'));
  return copy;
}

const sourceFiles = new Map<string, ts.SourceFile>();
let previous: ts.Program | undefined;

/**
 * Type-checks bodies; resolves with one message per problem (`[label] line: text`), empty when all
 * of them match the official types. Compiles once per call (a few seconds the first time in a
 * process, then the library files are reused).
 */
export function typecheckRequestBodies(bodies: readonly RecordedBody[]): string[] {
  if (bodies.length === 0) return [];
  const lines: string[] = [HEADER];
  const startLines: number[] = [];
  let line = HEADER.split('\n').length;
  for (const [index, recorded] of bodies.entries()) {
    const json = JSON.stringify(withoutAllowedExtras(recorded.kind, recorded.body), null, 1);
    startLines.push(line);
    const text = `// ${recorded.label.replace(/\n/g, ' ')}\nexport const body${index}: ${TYPE_OF[recorded.kind]} = ${json};\n`;
    lines.push(text);
    line += text.split('\n').length - 1;
  }
  const source = lines.join('\n');
  const host = ts.createCompilerHost(OPTIONS, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (fileName === GENERATED) return ts.createSourceFile(fileName, source, languageVersion, true);
    let file = sourceFiles.get(fileName);
    if (!file) {
      file = getSourceFile(fileName, languageVersion, onError, shouldCreate);
      if (file) sourceFiles.set(fileName, file);
    }
    return file;
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => fileName === GENERATED || fileExists(fileName);
  const program = ts.createProgram([GENERATED], OPTIONS, host, previous);
  previous = program;
  const generated = program.getSourceFile(GENERATED)!;
  const diagnostics = [...program.getSyntacticDiagnostics(generated), ...program.getSemanticDiagnostics(generated)];
  return diagnostics.map((diagnostic) => {
    const at = diagnostic.start === undefined ? 0 : generated.getLineAndCharacterOfPosition(diagnostic.start).line;
    let owner = 0;
    while (owner + 1 < startLines.length && startLines[owner + 1] <= at) owner++;
    const label = startLines.length > 0 && at >= startLines[0] ? bodies[owner].label : '(header)';
    return `[${label}] line ${at + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}
