/**
 * Who a call acts as. A plain user URN holds that user's privileges; a scoped actor (what a request made
 * with a scoped access token acts as) holds only those of its scopes that the user holds at the time of
 * the call, so a privilege taken from the user is gone from the token at once. `READ_ONLY` as a scope
 * allows reads only.
 */
export interface ScopedActor {
  readonly urn: string;
  /** Privilege names, or `READ_ONLY`. */
  readonly scopes: readonly string[];
}

export type Actor = string | ScopedActor;

/** The scope that allows reads only (reads need no privilege). */
export const READ_ONLY = 'READ_ONLY';

export function isScopedActor(actor: unknown): actor is ScopedActor {
  return (
    typeof actor === 'object' &&
    actor !== null &&
    Array.isArray((actor as ScopedActor).scopes) &&
    typeof (actor as ScopedActor).urn === 'string'
  );
}

/** The user URN an actor acts as. */
export function actorUrn(actor: Actor): string {
  return typeof actor === 'string' ? actor : actor.urn;
}
