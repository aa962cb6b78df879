import type { CatalogTelemetry } from './telemetry';
import { activeTracingApi, inSpan, outcomeOf, type SpanAttributes } from './tracing';

/**
 * The public catalog calls that are measured and traced, by service and method: the operation kind (a
 * metric label and span attribute) and which argument holds the URN or the batch, so that a span can say
 * which entity type and how many items, never a value. Methods not listed pass through untouched.
 */
interface OperationSpec {
  operation: string;
  /** Index of the argument that is the entity URN. */
  urn?: number;
  /** Index of the argument that is the aspect name. */
  aspect?: number;
  /** Index of the argument that is the batch (an array of items with `urn` / `entityUrn` / `entityType`). */
  items?: number;
  /** Index of the argument that is a search input (`types`). */
  search?: number;
}

const read = (urn?: number): OperationSpec => ({ operation: 'read', ...(urn === undefined ? {} : { urn }) });

const OPERATIONS: Record<string, Record<string, OperationSpec>> = {
  entities: {
    upsertAspect: { operation: 'upsert', urn: 1, aspect: 2 },
    upsertAspects: { operation: 'upsert', urn: 1 },
    upsertMany: { operation: 'bulk', items: 1 },
    applyProposals: { operation: 'bulk', items: 1 },
    patchAspect: { operation: 'patch', urn: 1, aspect: 2 },
    patchMany: { operation: 'patch', items: 1 },
    delete: { operation: 'delete', urn: 1 },
    deleteEntity: { operation: 'delete', urn: 1 },
    deleteAspect: { operation: 'delete', urn: 1, aspect: 2 },
    deleteAspects: { operation: 'delete', urn: 1 },
    restore: { operation: 'restore', urn: 1 },
    get: read(1),
    getMany: read(),
    getAspect: { operation: 'read', urn: 1, aspect: 2 },
    exists: read(1),
    history: { operation: 'read', urn: 1, aspect: 2 },
    list: read(),
    scroll: read(),
  },
  properties: {
    create: { operation: 'definition' },
    update: { operation: 'definition' },
    upsert: { operation: 'definition' },
    upsertMany: { operation: 'definition', items: 1 },
    softDelete: { operation: 'delete', urn: 1 },
    hardDelete: { operation: 'delete', urn: 1 },
    delete: { operation: 'delete', urn: 1 },
    restore: { operation: 'restore', urn: 1 },
    upsertValues: { operation: 'upsert', urn: 1 },
    upsertValuesMany: { operation: 'bulk', items: 1 },
    removeValues: { operation: 'patch', urn: 1 },
    patchValues: { operation: 'patch', urn: 1 },
    applyToMatches: { operation: 'bulk', search: 1 },
    previewChange: { operation: 'preview' },
    previewChanges: { operation: 'preview', items: 1 },
    editValues: { operation: 'bulk', items: 1 },
    get: read(1),
    getValues: read(1),
    list: read(),
    valueHistory: read(1),
  },
  search: {
    search: { operation: 'search', search: 1 },
    scroll: { operation: 'scroll', search: 1 },
    aggregate: { operation: 'aggregate', search: 1 },
  },
  tokens: {
    verify: { operation: 'token_verify' },
    create: { operation: 'token_create' },
    revoke: { operation: 'token_revoke' },
    list: read(),
  },
  timeseries: {
    append: { operation: 'timeseries_append', urn: 1, aspect: 2 },
    appendMany: { operation: 'bulk', aspect: 1, items: 2 },
    query: read(),
    truncate: { operation: 'truncate' },
  },
  policies: {
    create: { operation: 'policy' },
    update: { operation: 'policy' },
    remove: { operation: 'policy' },
  },
  changes: {
    read: read(),
  },
};

/** Token failure reasons as verification outcomes (a bad signature is a forged token). */
const VERIFICATION_OUTCOMES: Record<string, string> = {
  expired: 'expired',
  revoked: 'revoked',
  bad_signature: 'forged',
  forged: 'forged',
  unknown_key: 'unknown_key',
  malformed: 'malformed',
};

function verificationOutcome(error: unknown): string {
  const reason = (error as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? (VERIFICATION_OUTCOMES[reason] ?? 'other') : outcomeOf(error);
}

const URN = /^urn:li:([A-Za-z][A-Za-z0-9]{0,63}):/;

function entityTypeIn(value: unknown): string | undefined {
  return typeof value === 'string' ? URN.exec(value)?.[1] : undefined;
}

/** Up to five distinct entity types of a batch's items, sorted. */
function entityTypesOf(items: readonly unknown[]): string {
  const types = new Set<string>();
  for (const item of items) {
    if (types.size >= 5) break;
    if (typeof item !== 'object' || item === null) continue;
    const { urn, entityUrn, entityType } = item as Record<string, unknown>;
    const type =
      entityTypeIn(urn) ?? entityTypeIn(entityUrn) ?? (typeof entityType === 'string' && entityType.length <= 64 ? entityType : undefined);
    if (type) types.add(type);
  }
  return [...types].sort().join(',');
}

const ASPECT_NAME = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;

function spanAttributes(method: string, spec: OperationSpec, adapter: string, args: readonly unknown[]): SpanAttributes {
  const attributes: SpanAttributes = {
    'metacatalog.operation': spec.operation,
    'metacatalog.method': method,
    'metacatalog.adapter': adapter,
  };
  const type = spec.urn === undefined ? undefined : entityTypeIn(args[spec.urn]);
  if (type) attributes['metacatalog.entity_type'] = type;
  const aspect = spec.aspect === undefined ? undefined : args[spec.aspect];
  if (typeof aspect === 'string' && ASPECT_NAME.test(aspect)) attributes['metacatalog.aspect'] = aspect;
  const items = spec.items === undefined ? undefined : args[spec.items];
  if (Array.isArray(items)) {
    attributes['metacatalog.item_count'] = items.length;
    const types = entityTypesOf(items);
    if (types) attributes['metacatalog.entity_type'] = types;
  }
  const input = spec.search === undefined ? undefined : args[spec.search];
  const types = (input as { types?: unknown } | undefined)?.types;
  if (Array.isArray(types) && types.length > 0) {
    attributes['metacatalog.entity_type'] = types
      .filter((t): t is string => typeof t === 'string' && t.length <= 64)
      .slice(0, 5)
      .join(',');
  }
  return attributes;
}

type AnyMethod = (...args: unknown[]) => unknown;

function measuredMethod(
  telemetry: CatalogTelemetry,
  target: object,
  original: AnyMethod,
  method: string,
  spec: OperationSpec,
): (...args: unknown[]) => Promise<unknown> {
  const isVerify = spec.operation === 'token_verify';
  return (...args) => {
    const sink = telemetry.metrics;
    const call = (): Promise<unknown> => {
      try {
        return Promise.resolve(original.apply(target, args));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    const traced = activeTracingApi()
      ? inSpan(`metacatalog ${method}`, () => spanAttributes(method, spec, telemetry.adapterName, args), call)
      : call();
    if (!sink) return traced;
    const started = performance.now();
    // Recorded beside the caller's await, not in front of it: measuring adds no step to the call.
    traced.then(
      () => {
        sink.operation(spec.operation, method, 'ok', (performance.now() - started) / 1000);
        if (isVerify) sink.tokenVerification('ok');
      },
      (error: unknown) => {
        sink.operation(spec.operation, method, outcomeOf(error), (performance.now() - started) / 1000);
        if (isVerify) sink.tokenVerification(verificationOutcome(error));
      },
    );
    return traced;
  };
}

/** `follow` with the number of open iterations counted (the SSE followers gauge). */
function countedFollow(telemetry: CatalogTelemetry, target: object, original: AnyMethod): AnyMethod {
  return (...args) => {
    const iterable = original.apply(target, args) as AsyncIterable<unknown>;
    return {
      [Symbol.asyncIterator](): AsyncIterator<unknown> {
        const inner = iterable[Symbol.asyncIterator]();
        let open = true;
        telemetry.followers++;
        const close = () => {
          if (open) {
            open = false;
            telemetry.followers--;
          }
        };
        return {
          async next(...value: [] | [unknown]) {
            try {
              const step = await inner.next(...value);
              if (step.done) close();
              return step;
            } catch (error) {
              close();
              throw error;
            }
          },
          async return(value?: unknown) {
            close();
            return inner.return ? inner.return(value) : { done: true, value };
          },
          async throw(error?: unknown) {
            close();
            if (inner.throw) return inner.throw(error);
            throw error;
          },
        };
      },
    };
  };
}

/**
 * The service as the catalog hands it out: the listed methods timed (when metrics are on) and traced
 * (when `@opentelemetry/api` is loaded); everything else is the service's own, bound to it.
 */
export function instrumentService<T extends object>(service: T, serviceName: string, telemetry: CatalogTelemetry): T {
  const specs = OPERATIONS[serviceName] ?? {};
  // One wrapper per method name actually called: bounded by the service's methods.
  const wrappers = new Map<string | symbol, { original: AnyMethod; wrapper: AnyMethod }>();
  return new Proxy(service, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const known = wrappers.get(property);
      if (known && known.original === value) return known.wrapper;
      const original = value as AnyMethod;
      const name = typeof property === 'string' ? property : '';
      const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
      const wrapper =
        serviceName === 'changes' && name === 'follow'
          ? countedFollow(telemetry, target, original)
          : spec
            ? measuredMethod(telemetry, target, original, `${serviceName}.${name}`, spec)
            : (original.bind(target) as AnyMethod);
      wrappers.set(property, { original, wrapper });
      return wrapper;
    },
  });
}
