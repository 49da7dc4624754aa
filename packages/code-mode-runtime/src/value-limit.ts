/**
 * The value size limit: the most characters one value may have when it crosses between a cell
 * and its host (nested-call arguments and results, a text / notify / image item, a stored value
 * or key, the error a cell fails with).
 *
 * Why it exists: sending a string out of an isolate, looking it up as a key or matching it
 * flattens it, which allocates the whole string in one piece on the cell's heap. When such an
 * allocation does not fit, V8 does not fail it gracefully the way it fails gradual growth (the
 * heap-limit error): it reports a fatal out-of-memory error ("CALL_AND_RETRY_LAST",
 * `is_heap_oom`), and isolated-vm aborts the whole host process. Sending a 12,000,000-character
 * argument from a 32 MB cell did exactly that: the argument, its JSON (≈ 24 MB together) and
 * the flat copy for the host did not fit. isolated-vm's `onCatastrophicError` is no way out
 * either: it parks the isolate's thread forever, and the process then hangs at exit.
 *
 * One eighth of the heap keeps a value, its JSON and the flat copy (≈ 3 × the value) well inside
 * the heap, so the copy cannot be the allocation that breaks it; a value over the limit is
 * refused inside the cell before it is flattened, with an error that names the limit.
 */
export function maxValueChars(heapMb: number): number {
  return Math.floor((heapMb * 1024 * 1024) / 8);
}

/** The error text for a value over the limit (the same text the cell-side check throws). */
export function valueTooLarge(what: string, length: number, heapMb: number): string {
  return (
    `exec value size limit exceeded: ${what} is ${length} characters, over the limit of ${maxValueChars(heapMb)} ` +
    `characters per value for a cell with a heap limit of ${heapMb} MB`
  );
}
