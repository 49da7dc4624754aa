/** The error `promise` rejects with; throws when it resolves (a test that expected a failure). */
export async function rejectionOf<E = Error & { code?: string }>(promise: Promise<unknown>): Promise<E> {
  try {
    await promise;
  } catch (error) {
    return error as E;
  }
  throw new Error('expected a rejection');
}
