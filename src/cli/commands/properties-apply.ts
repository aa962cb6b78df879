import type { ApplyPreview, ApplyStatus, ApplyToMatchesInput, FacetFilterInput, PropertyValue } from '../../index';
import type { PropertyRecord } from '../backend';
import { defineCommand } from '../define-command';
import { CommandError, UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog properties apply [--query Q] [--type T ...] [--filter FIELD=VALUE ...]
                                   [--set QN=VALUE ...] [--remove QN ...] [--dry-run] [--chunk-size N]
                                   [--db file | --server url] [--json]

Sets and removes structured properties on every entity a search matches (as catalog search reads
--query, --type and --filter). QN is a property's qualified name or URN; --set QN=VALUE given again
for one property sets several values. Numbers are written as numbers for number properties.

With --dry-run: how many entities match, a sample with their properties before and after, and the
violations the change would meet; nothing is written. Otherwise the same checks (nothing happens when
one fails), then a durable background job in atomic chunks: a progress bar on a terminal, and the final
status once the job ends. Needs EDIT_ENTITY_PROPERTIES.
With --json: the dry run's answer, or the job's final status.

  --query <text>       full text (default: everything)
  --type <type>        an entity type (dataset or DATASET); repeatable (default: every type with properties)
  --filter <f=v>       a search filter, e.g. platform=urn:li:dataPlatform:hive or
                       structuredProperties.io.acme.tier=gold; repeatable, all must hold
  --set <qn=value>     a property to set; repeatable
  --remove <qn>        a property to remove; repeatable
  --dry-run            preview only
  --chunk-size <n>     entities per atomic chunk (default 500)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 applied (or previewed), 1 refused, failed or cancelled, 2 usage error.
`;

function splitPair(text: string, option: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`${option} takes NAME=VALUE, got "${text}"`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/** The property a name means: by URN or qualified name among the definitions; undefined when none has it. */
function findProperty(records: readonly PropertyRecord[], name: string): PropertyRecord | undefined {
  return records.find((r) => r.urn === name) ?? records.find((r) => r.definition.qualifiedName === name);
}

function typedValue(record: PropertyRecord | undefined, text: string): PropertyValue {
  if (record?.definition.valueType.endsWith('.number')) {
    const number = Number(text);
    if (text.trim() === '' || !Number.isFinite(number)) throw new UsageError(`${record.urn} takes numbers, got "${text}"`);
    return { double: number };
  }
  return { string: text };
}

function printPreview(print: (text: string) => void, preview: ApplyPreview): void {
  print(`${preview.matched} ${preview.matched === 1 ? 'entity matches' : 'entities match'}`);
  const show = (list: ReadonlyArray<{ propertyUrn: string; values: PropertyValue[] }>) =>
    list.map((a) => `${a.propertyUrn}=${a.values.map((v) => ('string' in v ? v.string : String(v.double))).join('|')}`).join(', ') ||
    '(none)';
  for (const s of preview.sample) print(`  ${s.urn}\n    before: ${show(s.before)}\n    after:  ${show(s.after)}`);
  if (preview.violations.length === 0) print('No violations');
  for (const v of preview.violations) {
    const where = [v.urn, v.entityType && `${v.count ?? ''} ${v.entityType} entities`.trim()].filter(Boolean).join(', ');
    print(`Violation${where ? ` (${where})` : ''}: ${v.message}`);
  }
}

export const propertiesApplyCommand = defineCommand({
  name: 'properties apply',
  summary: 'set or remove structured properties on every match of a search',
  usage: USAGE,
  options: {
    query: { type: 'string' },
    type: { type: 'string', multiple: true },
    filter: { type: 'string', multiple: true },
    set: { type: 'string', multiple: true },
    remove: { type: 'string', multiple: true },
    'dry-run': { type: 'boolean' },
    'chunk-size': { type: 'string' },
  },
  connects: true,
  async run(cli) {
    const sets = (cli.values.set ?? []).map((s) => splitPair(s, '--set'));
    const removes = cli.values.remove ?? [];
    if (sets.length === 0 && removes.length === 0) throw new UsageError('nothing to do: pass --set QN=VALUE or --remove QN');
    const filters: FacetFilterInput[] = (cli.values.filter ?? []).map((f) => {
      const [field, value] = splitPair(f, '--filter');
      return { field, value };
    });
    const chunkText = cli.values['chunk-size'];
    const chunkSize = chunkText === undefined ? undefined : Number(chunkText);
    if (chunkSize !== undefined && !Number.isInteger(chunkSize))
      throw new UsageError(`--chunk-size takes a whole number, got "${chunkText}"`);
    const backend = await cli.backend();
    const records = sets.length ? await backend.listProperties() : [];
    // One entry per property, its values in the order given.
    const set = new Map<string, PropertyValue[]>();
    for (const [name, text] of sets) {
      const record = findProperty(records, name);
      const key = record?.urn ?? name;
      set.set(key, [...(set.get(key) ?? []), typedValue(record, text)]);
    }
    const input: ApplyToMatchesInput = {
      ...(cli.values.query !== undefined ? { query: cli.values.query } : {}),
      ...(cli.values.type?.length ? { types: cli.values.type as ApplyToMatchesInput['types'] } : {}),
      ...(filters.length ? { orFilters: [{ and: filters }] } : {}),
      ...(set.size ? { set: [...set].map(([propertyUrn, values]) => ({ propertyUrn, values })) } : {}),
      ...(removes.length ? { remove: removes } : {}),
    };
    const dryRun = cli.values['dry-run'] === true;
    const answer = await backend.applyToMatches(input, { dryRun, ...(chunkSize !== undefined ? { chunkSize } : {}) });
    if (!('jobId' in answer)) {
      if (cli.json) cli.printJson(answer);
      else printPreview((text) => cli.print(text), answer);
      return;
    }
    cli.note(`Job ${answer.jobId}: applying to ${answer.matched} ${answer.matched === 1 ? 'entity' : 'entities'}`);
    const bar = !cli.json && cli.terminal.canDrawProgress ? cli.terminal.progress('Applying') : undefined;
    let status: ApplyStatus;
    try {
      status = await backend.waitForApply(answer.jobId, (s) => bar?.update(s.done + s.failed, s.total));
    } finally {
      bar?.finish();
    }
    if (cli.json) cli.printJson(status);
    else {
      cli.print(
        `${status.state}: ${status.done} of ${status.total} done, ${status.failed} failed, ${status.skipped} skipped (deleted meanwhile)`,
      );
      for (const e of status.errors) cli.print(`  ${e.urn}: ${e.message}`);
    }
    if (status.state !== 'DONE')
      throw new CommandError(`job ${status.jobId} ${status.state.toLowerCase()}${status.message ? `: ${status.message}` : ''}`);
  },
});
