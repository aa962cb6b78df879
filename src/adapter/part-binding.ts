/**
 * Two ways to make a part of the contract from code an adapter already has, without forwarding each
 * member by hand: the member names come from the one list of parts (parts.ts).
 *
 * - `partOf(name, target)`: an object whose methods carry the part's names (synchronous results are
 *   fine), looked up at each call, so that a store that is closed or not open yet rejects there;
 * - `partOverHandle(name, handle, functions)`: functions named as the part's methods that take the
 *   backend's handle (a connection, a pool) first, such as the functions of a module.
 *
 * Every member of the result is async: what `target()` or `handle()` throws becomes a rejection.
 */
import { ADAPTER_PARTS, type PartInterfaces, type PartName } from './parts';

/** The part's required methods, by name. */
type RequiredMethod<P extends PartName> = (typeof ADAPTER_PARTS)[P]['required'][number];
type MethodOf<P extends PartName, K extends RequiredMethod<P>> = PartInterfaces[P][K & keyof PartInterfaces[P]];
type Args<F> = F extends (...args: infer A) => unknown ? A : never;
type Result<F> = F extends (...args: never[]) => infer R ? Awaited<R> | R : never;

/** What `partOf` calls: the part's methods under their names, synchronous or not. */
export type PartTarget<P extends PartName> = {
  [K in RequiredMethod<P>]: (...args: Args<MethodOf<P, K>>) => Result<MethodOf<P, K>>;
};

/** What `partOverHandle` calls: the part's methods under their names, each taking the handle first. */
export type PartFunctions<P extends PartName, H> = {
  [K in RequiredMethod<P>]: (handle: H, ...args: Args<MethodOf<P, K>>) => Result<MethodOf<P, K>>;
};

/** The part's required methods, each calling the same method of what `target()` returns at the time. */
export function partOf<P extends PartName>(part: P, target: () => PartTarget<P>): PartInterfaces[P] {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const method of ADAPTER_PARTS[part].required) {
    out[method] = async (...args) => {
      const current = target() as unknown as Record<string, (...a: unknown[]) => unknown>;
      return current[method]!(...args);
    };
  }
  return out as unknown as PartInterfaces[P];
}

/** The part's required methods, each calling the function of the same name with `handle()` first. */
export function partOverHandle<P extends PartName, H>(part: P, handle: () => H, functions: PartFunctions<P, H>): PartInterfaces[P] {
  const out: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  const table = functions as unknown as Record<string, (handle: H, ...a: unknown[]) => unknown>;
  for (const method of ADAPTER_PARTS[part].required) {
    const fn = table[method];
    if (typeof fn !== 'function') throw new Error(`partOverHandle: ${part}.${method} is missing`);
    out[method] = async (...args) => fn(handle(), ...args);
  }
  return out as unknown as PartInterfaces[P];
}
