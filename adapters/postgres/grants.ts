/**
 * Privileges carried over by migrations: a new table or view gets what roles other than the owner
 * held on the object it takes over from, so a deployment's grants keep working.
 */

/** The role of an `aclexplode(...) a` row, spelled as GRANT takes it (`PUBLIC` for everyone). */
export const GRANTEE = `CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END`;

/**
 * A PL/pgSQL loop (inside a `DO` block declaring `r record`) granting on `target` every privilege
 * that roles other than its owner hold on `source`. Both are schema-qualified names.
 */
export function copyGrantsLoop(source: string, target: string): string {
  return `
      FOR r IN SELECT DISTINCT ${GRANTEE} AS who, a.privilege_type AS what
               FROM pg_class c, aclexplode(c.relacl) a
               WHERE c.oid = '${source}'::regclass AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT %s ON ${target} TO %s', r.what, r.who);
      END LOOP;`;
}
