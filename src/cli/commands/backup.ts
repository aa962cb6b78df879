import { chmodSync, copyFileSync, existsSync } from 'node:fs';
import { defineCommand } from '../define-command';
import { UsageError } from '../io';
import { OUTPUT_HELP } from '../options';
import { signingKeyFileOf } from '../signing-key';

const USAGE = `Usage: metacatalog backup --db FILE --to FILE [--force] [--json]

Makes a consistent copy of a SQLite catalog, also while a server writes to it (SQLite's online backup
API: the copy holds the database as of one commit). The copy is checked (PRAGMA quick_check) before it
gets its name, stands alone (no -wal file beside it) and is readable by its owner only. The token
signing key kept beside the database (FILE.signing-key) is copied beside the copy, so that tokens keep
verifying after a restore. To restore: stop the servers, put the copy (and its .signing-key) in place
of the database, remove the old FILE-wal and FILE-shm, start again (docs/deploy.md).

  --db <file>          the catalog to copy
  --to <file>          where the copy goes; refused when it exists, unless --force
  --force              replace an existing copy
${OUTPUT_HELP}

For PostgreSQL use its own tools: pg_dump for a logical copy, pg_basebackup for a base backup.

Exit codes: 0 copied, 1 failed, 2 usage error.
`;

export const backupCommand = defineCommand({
  name: 'backup',
  summary: 'a consistent copy of a SQLite catalog, also while it serves',
  usage: USAGE,
  options: { db: { type: 'string' }, to: { type: 'string' }, force: { type: 'boolean' } },
  connects: false,
  async run(cli) {
    const { db, to } = cli.values;
    if (!db) throw new UsageError('--db names the SQLite catalog to copy');
    if (!to) throw new UsageError('--to names the file the copy goes to');
    if (existsSync(to) && cli.values.force !== true) throw new UsageError(`${to} exists; pass --force to replace it`);
    const { backupSqliteDatabase } = await import('../../../adapters/sqlite/index');
    const started = Date.now();
    const result = await backupSqliteDatabase(db, to, { overwrite: cli.values.force === true });
    const keyFile = signingKeyFileOf(db);
    const keyCopy = signingKeyFileOf(to);
    const withKey = existsSync(keyFile);
    if (withKey) {
      copyFileSync(keyFile, keyCopy);
      chmodSync(keyCopy, 0o600);
    }
    const seconds = (Date.now() - started) / 1000;
    if (cli.json) cli.printJson({ file: to, bytes: result.bytes, pages: result.pages, signingKey: withKey ? keyCopy : null, seconds });
    else
      cli.print(
        `Copied ${db} to ${to} (${result.bytes} bytes, ${result.pages} pages) in ${seconds.toFixed(2)} s${withKey ? `; signing key copied to ${keyCopy}` : ''}`,
      );
  },
});
