/** The error of a rejection (fails when it resolves): its code, message and every violation. */
export async function errorOf(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; details: Array<{ path: string; message: string }> }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code: string; message: string; details?: Array<{ path: string; message: string }> };
    return { code: e.code, message: e.message, details: [...(e.details ?? [])] };
  }
  throw new Error('expected a rejection, the promise resolved');
}
