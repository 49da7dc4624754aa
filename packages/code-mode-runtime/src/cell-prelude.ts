/**
 * The isolate side of a cell: installs the Code Mode globals (`tools`, `text`, `store`, `load`,
 * `notify`, `exit`, …) and returns the `control` function the host enters through (`resolve` a tool call, fire `timers`).
 *
 * Evaluated with `context.evalClosure(CELL_PRELUDE, [post, configJson, storedPairs, flow], { result: { reference: true } })`:
 * `$0` is an `ivm.Callback({ ignored: true })` (a plain function inside the isolate), `$1` the
 * cell's config as JSON, `$2` the session's stored values as a copied `[[key, json], …]` array
 * (one string per value, never one string for all of them) and `$3` a synchronous
 * `ivm.Callback`. None is reachable from user code:
 * they live in this closure only, and user code is compiled separately as a module. Every
 * message sent to the host is made of primitives; every error a helper throws is a plain string,
 * except a failed nested tool call, which rejects with a `ToolCallError` (below).
 *
 * Value size limit: a string the bridge copies out (nested-call arguments, text / notify / image
 * items, stored values and keys, the final error) is checked with `.length`, which never
 * flattens a string, before anything that does (`charCodeAt`, a RegExp, a property key, the copy
 * itself). Flattening allocates the whole string at once, and V8 cannot fail such an allocation
 * near the heap limit gracefully: it aborts the whole process (see `value-limit.ts`).
 *
 * Backpressure: messages go out through the ignored callback, which queues them on the host's
 * event loop without waiting. After every FLOW_MESSAGES messages (or FLOW_CHARS characters), the
 * cell calls the synchronous `flow` callback, which blocks the cell's thread until the host has
 * run everything queued before it (isolated-vm runs a thread's tasks in order). So a cell that
 * floods the bridge (`for (;;) yield_control()`, timers set and cleared in a loop) never queues
 * more than one window on the host, and the host's event loop (its timers: the CPU and wall
 * limits, its signals) keeps running.
 */
export const CELL_PRELUDE = `'use strict';
const post = $0;
const flow = $3;
const config = JSON.parse($1);
const G = globalThis;
const stringify = JSON.stringify;
const parse = JSON.parse;
const StringOf = String;
const NumberOf = Number;
const isArray = Array.isArray;
const trunc = Math.trunc;
const finite = Number.isFinite;
const createNull = () => Object.create(null);
const define = Object.defineProperty;
const PromiseOf = Promise;
const rejectWith = PromiseOf.reject.bind(PromiseOf);
// Bound now: a cell that replaces Promise.prototype.then cannot stop its calls from being sent.
const thenOf = Function.prototype.call.bind(PromiseOf.prototype.then);
const settledPromise = PromiseOf.resolve();
// Bound now, so a cell that later rewrites String/RegExp/Array prototypes cannot reach our checks.
const testPattern = Function.prototype.call.bind(RegExp.prototype.test);
const lowerCase = Function.prototype.call.bind(String.prototype.toLowerCase);
const trimText = Function.prototype.call.bind(String.prototype.trim);
const EXIT = '__codex_code_mode_exit__';
const ErrorOf = Error;
const toolErrors = new WeakSet();
const addToolError = Function.prototype.call.bind(WeakSet.prototype.add);
const hasToolError = Function.prototype.call.bind(WeakSet.prototype.has);
const limits = config.limits;
const maxValueChars = limits.maxValueChars;

let finished = false;
let outputBytes = 0;
let outputItems = 0;

const FLOW_MESSAGES = 512;
const FLOW_CHARS = 4194304;
let unsentWindow = 0;
let unsentChars = 0;
function send(kind, a, b, c) {
  post(kind, a, b, c);
  unsentWindow++;
  if (typeof a === 'string') unsentChars += a.length;
  if (typeof b === 'string') unsentChars += b.length;
  if (typeof c === 'string') unsentChars += c.length;
  if (unsentWindow >= FLOW_MESSAGES || unsentChars >= FLOW_CHARS) {
    unsentWindow = 0;
    unsentChars = 0;
    flow();
  }
}

for (const name of ['console', 'WebAssembly', 'SharedArrayBuffer', 'Atomics']) delete G[name];

// A failed nested tool call rejects with this Error: its message is the failure text, and the
// failure reads exactly as the bare text it used to be everywhere else: String(e) and template
// strings (toString), text(e) and console.log(e), JSON (toJSON, so text({ e }) and store() keep
// the text) and, uncaught, the cell's error (its stack is the text alone, no frames).
class ToolCallError extends ErrorOf {
  constructor(message) {
    super(message);
    define(this, 'stack', { value: message, writable: true, configurable: true });
    addToolError(toolErrors, this);
  }
  toString() {
    return StringOf(this.message);
  }
  toJSON() {
    return StringOf(this.message);
  }
}
define(ToolCallError.prototype, 'name', { value: 'ToolCallError', writable: true, configurable: true });

function isToolError(value) {
  return hasToolError(toolErrors, value);
}

function toolError(message) {
  return new ToolCallError(typeof message === 'string' ? message : describeMessage(message));
}

function describe(error) {
  try {
    const stack = error !== null && (typeof error === 'object' || typeof error === 'function') ? error.stack : undefined;
    if (typeof stack === 'string') return stack;
  } catch (_) {}
  try { return StringOf(error); } catch (_) { return 'unknown error'; }
}

function utf8Length(text) {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) { bytes += 4; i++; }
    else bytes += 3;
  }
  return bytes;
}

function tooLarge(what, length) {
  return 'exec value size limit exceeded: ' + what + ' is ' + length + ' characters, over the limit of ' + maxValueChars +
    ' characters per value for a cell with a heap limit of ' + limits.heapMb + ' MB';
}

// Uses only .length: must run before anything that flattens the string.
function checkSize(text, what) {
  if (text.length > maxValueChars) throw tooLarge(what, text.length);
}

// Every text(), image() and notify() counts, empty ones included: a flood of empty items is bounded too.
function countItem() {
  if (outputItems >= limits.maxOutputItems) {
    throw 'exec output limit exceeded: a cell may produce at most ' + limits.maxOutputItems + ' output items (text, image and notify calls)';
  }
  outputItems++;
}

function charge(text, what) {
  const remaining = limits.maxOutputBytes - outputBytes;
  if (text.length > remaining) throw 'exec output limit exceeded: a cell may produce at most ' + limits.maxOutputBytes + ' bytes of output';
  checkSize(text, what);
  const bytes = utf8Length(text);
  if (bytes > remaining) throw 'exec output limit exceeded: a cell may produce at most ' + limits.maxOutputBytes + ' bytes of output';
  outputBytes += bytes;
}

function toText(value) {
  if (typeof value === 'string') return value;
  const type = typeof value;
  if (value === undefined || value === null || type === 'boolean' || type === 'number' || type === 'bigint') return StringOf(value);
  if (isToolError(value)) return describeMessage(value);
  let json;
  try { json = stringify(value); } catch (error) { throw describeMessage(error); }
  if (json === undefined) return StringOf(value);
  return json;
}

function describeMessage(error) {
  try { return StringOf(error); } catch (_) { return 'unknown error'; }
}

function settle(failed, error) {
  if (finished) return;
  // Calls started in the run that settles the cell still reach the host (which then cancels them).
  flushCalls();
  finished = true;
  try {
    let errorText = '';
    let hasError = 0;
    if (failed && error !== EXIT) {
      hasError = 1;
      errorText = describe(error);
      if (typeof errorText !== 'string') errorText = 'unknown error';
      else if (errorText.length > maxValueChars) errorText = tooLarge('the error the cell failed with', errorText.length);
    }
    // One message per write (each within the value size limit), then done with their count;
    // the host commits them only when the count matches. No Array.prototype method is involved.
    let count = 0;
    for (const key in writes) { send('write', key, writes[key]); count++; }
    send('done', hasError, errorText, count);
  } catch (_) {
    send('done', 1, 'exec cell could not report its result', -1);
  }
}

// ---- text / image / notify -------------------------------------------------------------
function text(value) {
  const item = toText(value);
  countItem();
  charge(item, 'a text() item');
  if (!finished) send('text', item);
}

const IMAGE_SHAPE = 'image expects a non-empty image URL string, an object with image_url and optional detail, or a raw MCP image block';

function isDetail(value) {
  return value === 'auto' || value === 'low' || value === 'high' || value === 'original';
}

function normalizeDetail(detail) {
  if (detail.length > 16) throw 'image detail must be one of: auto, low, high, original';
  const lower = lowerCase(detail);
  if (!isDetail(lower)) throw 'image detail must be one of: auto, low, high, original';
  return lower;
}

function image(imageUrlOrItem, detail) {
  let url;
  let chosen;
  const first = imageUrlOrItem;
  if (typeof first === 'string') {
    if (first === '') throw IMAGE_SHAPE;
    checkSize(first, 'an image URL');
    url = first;
  } else if (first !== null && typeof first === 'object' && !isArray(first)) {
    if (typeof first.image_url === 'string') {
      const given = first.image_url;
      if (given === '') throw IMAGE_SHAPE;
      checkSize(given, 'an image URL');
      url = given;
      const own = first.detail;
      if (own !== undefined && own !== null) {
        if (typeof own !== 'string') throw 'image detail must be a string when provided';
        chosen = normalizeDetail(own);
      }
    } else if (typeof first.type === 'string') {
      if (first.type !== 'image') throw 'image only accepts MCP image blocks, got ' + stringify(first.type);
      const data = first.data;
      if (typeof data !== 'string' || data === '') throw IMAGE_SHAPE;
      checkSize(data, 'image data');
      const mime = typeof first.mimeType === 'string' ? first.mimeType : typeof first.mime_type === 'string' ? first.mime_type : 'application/octet-stream';
      url = testPattern(/^data:/i, data) ? data : 'data:' + mime + ';base64,' + data;
      checkSize(url, 'an image URL');
      const meta = first._meta;
      const metaDetail = meta !== null && typeof meta === 'object' ? meta['codex/imageDetail'] : undefined;
      if (typeof metaDetail === 'string' && metaDetail.length <= 16 && isDetail(lowerCase(metaDetail))) chosen = lowerCase(metaDetail);
    } else {
      throw IMAGE_SHAPE;
    }
  } else {
    throw IMAGE_SHAPE;
  }
  if (detail !== undefined && detail !== null) {
    if (typeof detail !== 'string') throw 'image detail must be a string when provided';
    chosen = normalizeDetail(detail);
  }
  if (testPattern(/^https?:/i, url)) throw 'Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead';
  if (!testPattern(/^data:/i, url)) throw 'image expects a base64 data: URL';
  countItem();
  charge(url, 'an image URL');
  if (!finished) send('image', url, chosen === undefined ? 'high' : chosen);
}

// generatedImage({ image_url, output_hint? }): an image-generation result, as Codex has it. The
// image goes through image() (same URL rules: data: URLs only, http(s) refused with the reference
// error; its own detail, else high), then the hint, if any, is one text item after it. The hint is
// checked first, so a bad hint appends nothing.
function generatedImage(result) {
  if (result === null || (typeof result !== 'object' && typeof result !== 'function')) throw 'generatedImage expects an image generation result object';
  let hint;
  try { hint = result.output_hint; } catch (_) { throw 'failed to read generatedImage output_hint'; }
  if (hint !== undefined && typeof hint !== 'string') throw 'generatedImage output_hint must be a string when provided';
  if (hint !== undefined) checkSize(hint, 'a generatedImage() output hint');
  image(result);
  if (hint !== undefined) text(hint);
}

function notify(value) {
  const message = toText(value);
  checkSize(message, 'a notify() message');
  if (trimText(message) === '') throw 'notify expects non-empty text';
  countItem();
  charge(message, 'a notify() message');
  if (!finished) send('notify', message);
}

// ---- console ---------------------------------------------------------------------------
// console.log / info / warn / error / debug append one text item, like text(): the arguments
// formatted as text() formats a value (strings as they are, objects as JSON), an Error as
// String(e) ("TypeError: …"; a failed tool call's is its text), joined by single spaces.
// No format specifiers (%s, %d): they stay as written.
function isErrorObject(value) {
  if (value === null || typeof value !== 'object') return false;
  try { return value instanceof ErrorOf; } catch (_) { return false; }
}

function consoleText(values) {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const part = isErrorObject(value) ? describeMessage(value) : toText(value);
    if (i > 0) line += ' ';
    line += part;
    // Checked as the line grows (.length only): a huge argument list never builds a huge line.
    checkSize(line, 'a console line');
  }
  return line;
}

function consoleMethod() {
  return function (...values) {
    text(consoleText(values));
  };
}

const consoleObject = {};
for (const method of ['log', 'info', 'warn', 'error', 'debug']) {
  define(consoleObject, method, { value: consoleMethod(), writable: true, enumerable: true, configurable: true });
}

function yield_control() {
  if (!finished) send('yield');
}

function exit() {
  throw EXIT;
}

// ---- store / load ----------------------------------------------------------------------
const stored = createNull();
const writes = createNull();
const storedPairs = $2;
for (let i = 0; i < storedPairs.length; i++) stored[storedPairs[i][0]] = storedPairs[i][1];

function coerceKey(key, helper) {
  try { return '' + \`\${key}\`; } catch (_) { throw helper + ' key must be a string'; }
}

function store(key, value) {
  const name = coerceKey(key, 'store');
  checkSize(name, 'a store() key');
  let json;
  try { json = stringify(value); } catch (error) { throw describeMessage(error); }
  if (json === undefined) throw 'Unable to store ' + stringify(name) + '. Only plain serializable objects can be stored.';
  checkSize(json, 'the JSON of a store() value');
  stored[name] = json;
  writes[name] = json;
}

function load(key) {
  const name = coerceKey(key, 'load');
  // No key this long can have been stored; looking it up would flatten it.
  if (name.length > maxValueChars) return undefined;
  const json = stored[name];
  return json === undefined ? undefined : parse(json);
}

// ---- timers ----------------------------------------------------------------------------
const timers = createNull();
let timerSequence = 0;
let liveTimers = 0;

function setTimeout(callback, delayMs) {
  if (typeof callback !== 'function') throw 'setTimeout expects a function callback';
  let delay = 0;
  try { delay = NumberOf(delayMs); } catch (_) { delay = 0; }
  // Node fires longer delays after 1 ms; clamp to 2^31 - 1 ms (about 24.8 days).
  delay = finite(delay) && delay > 0 ? (delay > 2147483647 ? 2147483647 : trunc(delay)) : 0;
  if (liveTimers >= limits.maxTimers) {
    throw 'exec timer limit exceeded: this cell already has ' + limits.maxTimers + ' pending timers (limit)';
  }
  const id = ++timerSequence;
  timers[id] = callback;
  liveTimers++;
  if (!finished) send('set-timer', id, delay);
  return id;
}

function clearTimeout(id) {
  if (id === undefined || id === null) return;
  let value;
  try { value = NumberOf(id); } catch (_) { throw 'clearTimeout expects a numeric timeout id'; }
  if (!finished && finite(value) && value > 0) {
    const key = trunc(value);
    if (timers[key] !== undefined) {
      delete timers[key];
      liveTimers--;
      send('clear-timer', key);
    }
  }
}

// ---- tools -----------------------------------------------------------------------------
const pending = createNull();
let inFlight = 0;
let inFlightChars = 0;
let callSequence = 0;

function makeTool(name, kind) {
  return function (args) {
    let json;
    if (args !== undefined) {
      try { json = stringify(args); } catch (error) { throw toolError(describeMessage(error)); }
    }
    if (json !== undefined && json.length > maxValueChars) {
      return rejectWith(toolError(tooLarge('the JSON of the arguments of tool \\\`' + name + '\\\`', json.length)));
    }
    if (kind === 'freeform') {
      if (json === undefined || json.charCodeAt(0) !== 34) return rejectWith(toolError('tool \\\`' + name + '\\\` expects a string input'));
    } else if (json === undefined) {
      json = '{}';
    } else if (json.charCodeAt(0) !== 123) {
      return rejectWith(toolError('tool \\\`' + name + '\\\` expects a JSON object for arguments'));
    }
    if (finished) return new PromiseOf(() => {});
    if (inFlight >= limits.maxInFlightCalls) {
      return rejectWith(toolError('tool \\\`' + name + '\\\` was not called: this cell already has ' + limits.maxInFlightCalls + ' nested tool calls in flight (limit)'));
    }
    if (inFlightChars + json.length > limits.maxInFlightArgumentChars) {
      return rejectWith(toolError('tool \\\`' + name + '\\\` was not called: its arguments (' + json.length + ' characters of JSON) would bring the nested-call arguments in flight in this cell over ' +
        limits.maxInFlightArgumentChars + ' characters (limit)'));
    }
    const id = 'tool-' + ++callSequence;
    const size = json.length;
    return new PromiseOf((resolve, reject) => {
      pending[id] = { resolve, reject, size };
      inFlight++;
      inFlightChars += size;
      queueCall(id, name, json);
    });
  };
}

// Calls a cell starts in the same synchronous run leave together, as one message, once the run
// reaches its next microtask checkpoint (so the host sees them in one tick and batches them).
// Elements are defined, not assigned: a setter the cell put on Array.prototype never sees them.
let queuedCalls = [];
let queuedCount = 0;
function queueCall(id, name, json) {
  define(queuedCalls, queuedCount++, { value: id, writable: true, enumerable: true, configurable: true });
  define(queuedCalls, queuedCount++, { value: name, writable: true, enumerable: true, configurable: true });
  define(queuedCalls, queuedCount++, { value: json, writable: true, enumerable: true, configurable: true });
  if (queuedCount === 3) thenOf(settledPromise, flushCalls);
}
function flushCalls() {
  const batch = queuedCalls;
  const count = queuedCount;
  queuedCalls = [];
  queuedCount = 0;
  if (!finished && count > 0) send('calls', batch);
}

const toolFunctions = {};
const allTools = [];
for (const tool of config.tools) {
  define(toolFunctions, tool.name, { value: makeTool(tool.name, tool.kind), writable: true, enumerable: true, configurable: true });
  allTools.push({ name: tool.name, description: tool.description, declaration: tool.declaration });
}

// ---- globals ---------------------------------------------------------------------------
G.tools = toolFunctions;
G.ALL_TOOLS = allTools;
G.text = text;
G.image = image;
G.generatedImage = generatedImage;
G.notify = notify;
G.yield_control = yield_control;
G.exit = exit;
G.setTimeout = setTimeout;
G.clearTimeout = clearTimeout;
// Not enumerable, as the standard console it replaces.
define(G, 'console', { value: consoleObject, writable: true, enumerable: false, configurable: true });
if (config.storeEnabled) {
  G.store = store;
  G.load = load;
}
define(G, '__switchyard_take', {
  configurable: true,
  value: function () { delete G.__switchyard_take; return settle; },
});

return function control(kind, a, b, c) {
  if (finished) return;
  if (kind === 'resolve') {
    const entry = pending[a];
    if (entry === undefined) return;
    delete pending[a];
    inFlight--;
    inFlightChars -= entry.size;
    if (b === 1) entry.resolve(c === undefined ? undefined : parse(c));
    else entry.reject(toolError(c));
  } else if (kind === 'timers') {
    const ids = parse(a);
    for (let i = 0; i < ids.length && !finished; i++) {
      const callback = timers[ids[i]];
      if (callback === undefined) continue;
      delete timers[ids[i]];
      liveTimers--;
      try { callback(); } catch (error) { settle(true, error); }
    }
  }
};
`;

/** Prepended to user code (same line, so line numbers hold); takes the settle function before user code runs. */
export const MODULE_PREFIX =
  'const __switchyard_settle = globalThis.__switchyard_take(); let __switchyard_ok = false; try { ';

/** Appended to user code: a module-level success or failure settles the cell (an `exit()` sentinel counts as success). */
export const MODULE_SUFFIX =
  '\n;__switchyard_ok = true; } catch (__switchyard_error) { __switchyard_settle(true, __switchyard_error); } if (__switchyard_ok) __switchyard_settle(false);';
