/**
 * The message of the `CONFIG` error `run` throws or rejects with (a `SwitchyardError`: an Error
 * with `code: 'CONFIG'`); anything else, or no error, fails the test.
 */
export async function configError(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (error instanceof Error && (error as { code?: unknown }).code === 'CONFIG') return error.message;
    throw error;
  }
  throw new Error('expected a CONFIG error');
}
