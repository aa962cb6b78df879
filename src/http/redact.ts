/**
 * The path written to the access log and error reports: credentials a client put in the query or the
 * path are replaced, so a log never holds a token (the Authorization header is never logged at all).
 */
const SECRET_PARAMS = /(^|&)((?:access[_-]?)?token|api[_-]?key|key|secret|password|passwd|authorization|signature)=[^&]*/gi;
// A JWT: three base64url parts, the first starting with `eyJ` (`{"` encoded); dots possibly percent-encoded.
const JWT_SHAPE = /eyJ[A-Za-z0-9_-]*(?:\.|%2[Ee])[A-Za-z0-9_-]+(?:\.|%2[Ee])[A-Za-z0-9_-]*/g;
const MAX_LOGGED_PATH = 2048;

export function redactForLog(rawPath: string, rawQuery: string): string {
  const query = rawQuery.replace(SECRET_PARAMS, '$1$2=[redacted]');
  const text = query ? `${rawPath}?${query}` : rawPath;
  const redacted = text.replace(JWT_SHAPE, '[redacted-token]');
  return redacted.length > MAX_LOGGED_PATH ? `${redacted.slice(0, MAX_LOGGED_PATH)}…` : redacted;
}
