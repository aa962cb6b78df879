import type { WriteBatch } from '../../adapter/types';
import { isCatalogError } from '../../errors';
import type { CatalogTelemetry } from './telemetry';
import { inSpan, outcomeOf } from './tracing';

/** A commit's outcome label: `conflict` is what makes the writer retry. */
function commitOutcome(error: unknown): string {
  return isCatalogError(error) && error.code === 'CONFLICT' ? 'conflict' : outcomeOf(error);
}

/** One adapter commit, timed and traced: entities, jobs and change events in the batch, never their content. */
export function measuredCommit(telemetry: CatalogTelemetry, batch: WriteBatch, commit: () => Promise<void>): Promise<void> {
  const entities = batch.entities?.length ?? 0;
  const events = batch.events?.length ?? 0;
  const traced = inSpan(
    'metacatalog adapter.commit',
    () => ({
      'metacatalog.adapter': telemetry.adapterName,
      'metacatalog.item_count': entities,
      'metacatalog.job_count': (batch.jobs?.length ?? 0) + (batch.completeJobs?.length ?? 0),
      'metacatalog.event_count': events,
    }),
    commit,
  );
  const sink = telemetry.metrics;
  if (!sink) return traced;
  const started = performance.now();
  // Recorded beside the caller's await, not in front of it: measuring adds no step to the commit.
  traced.then(
    () => sink.commit('ok', (performance.now() - started) / 1000, entities, events),
    (error: unknown) => sink.commit(commitOutcome(error), (performance.now() - started) / 1000, entities, 0),
  );
  return traced;
}

/** One adapter query (`search`, `aggregate`), timed and traced. */
export function measuredQuery<T>(
  telemetry: CatalogTelemetry,
  kind: string,
  request: { entityTypes?: readonly string[] },
  query: () => Promise<T>,
): Promise<T> {
  const traced = inSpan(
    `metacatalog adapter.${kind}`,
    () => {
      const types = request.entityTypes;
      return {
        'metacatalog.adapter': telemetry.adapterName,
        ...(types && types.length > 0 ? { 'metacatalog.entity_type': types.slice(0, 5).join(',') } : {}),
      };
    },
    query,
  );
  const sink = telemetry.metrics;
  if (!sink) return traced;
  const started = performance.now();
  traced.then(
    () => sink.query(kind, 'ok', (performance.now() - started) / 1000),
    (error: unknown) => sink.query(kind, outcomeOf(error), (performance.now() - started) / 1000),
  );
  return traced;
}
