import type { ChangeEvent } from '../adapter/types';
import type { ApplyJob, ApplyPreview, ApplyStatus, DefinitionChangePreview, ExportCounts, ExportRecord } from '../index';
import {
  CatalogError,
  encodeUrnForPath,
  entityTypeOf,
  parseUrn,
  type AccessTokenList,
  type AccessTokenMetadata,
  type EntityDeletion,
  type ReindexProgress,
  type StructuredPropertyDefinition,
  type TimeseriesIndexSizeRecord,
} from '../index';
import type { CliBackend, PropertyRecord, PropertyUpsertOutcome } from './backend';
import { remoteAccess } from './access-backend';
import { GmsClient } from './http-client';
import { CommandError } from './io';
import { remoteValues } from './remote-values';

/** The route of applying structured properties to every match of a search (and of its jobs' status). */
const APPLY_PATH = '/openapi/v3/structuredProperties/applyToMatches';

const PAGE = 1000;

const METADATA_FIELDS = 'urn id name description tokenType actorUrn ownerUrn createdAt expiresAt lastUsedAt privileges';

const CREATE_TOKEN = `mutation createAccessToken($input: CreateAccessTokenInput!) {
  createAccessToken(input: $input) { accessToken metadata { ${METADATA_FIELDS} } }
}`;
const LIST_TOKENS = `query listAccessTokens($input: ListAccessTokenInput!) {
  listAccessTokens(input: $input) { start count total tokens { ${METADATA_FIELDS} } }
}`;
const REVOKE_TOKEN = `mutation revokeAccessToken($tokenId: String!) { revokeAccessToken(tokenId: $tokenId) }`;

type GraphqlTokenMetadata = Omit<AccessTokenMetadata, 'type'> & { tokenType: AccessTokenMetadata['type'] };

/** GraphQL names the token kind `tokenType` (its `type` is the entity type); the library calls it `type`. */
function metadataOf(fields: GraphqlTokenMetadata): AccessTokenMetadata {
  const { tokenType, ...rest } = fields;
  return {
    ...rest,
    type: tokenType,
    description: rest.description ?? null,
    expiresAt: rest.expiresAt ?? null,
    lastUsedAt: rest.lastUsedAt ?? null,
    privileges: rest.privileges ?? null,
  };
}

interface EntityAnswer {
  urn: string;
  aspects?: Record<string, { value?: unknown }>;
}

function recordOf(entity: EntityAnswer): PropertyRecord | undefined {
  const definition = entity.aspects?.propertyDefinition?.value as StructuredPropertyDefinition | undefined;
  if (!definition) return undefined;
  const status = entity.aspects?.status?.value as { removed?: boolean } | undefined;
  return { urn: entity.urn, removed: status?.removed === true, definition };
}

const entityPath = (urn: string) => `/openapi/v2/entity/${encodeURIComponent(entityTypeOf(urn))}/${encodeUrnForPath(urn)}`;

/**
 * Remote mode (`--server <url>` with a token): every command is one request to the REST family of
 * docs/http.md describes (plus the routes the command line added: the YAML definitions file, the
 * reported delete, reindex), or to /api/graphql for tokens, as the established CLI does. The server
 * decides everything; this only shapes requests and answers.
 */
export function openRemoteBackend(server: string, token: string): CliBackend {
  const client = new GmsClient(server, token);
  let actor: Promise<string> | undefined;
  return {
    // Policies and service accounts (src/cli/access-backend.ts).
    ...remoteAccess(client),
    where: server,
    // Whom the server sees: it says so itself (the token is its business, not ours to decode).
    actor: () =>
      (actor ??= client.rest('GET', '/openapi/v2/me', {}).then((answer) => {
        const urn = (answer as { urn?: unknown } | undefined)?.urn;
        if (typeof urn !== 'string') throw new CommandError('the server did not say whom the access token acts as');
        return urn;
      })),
    async upsertProperties(entries) {
      const answer = (await client.rest('POST', '/operations', {
        query: { action: 'upsertStructuredPropertyDefinitions' },
        body: { entries },
      })) as { value: PropertyUpsertOutcome[] };
      return answer.value;
    },
    async previewProperties(entries) {
      const answer = (await client.rest('POST', '/operations', {
        query: { action: 'previewStructuredPropertyDefinitions' },
        body: { entries },
      })) as { value: DefinitionChangePreview[] };
      return answer.value;
    },
    async getProperty(urn) {
      parseUrn(urn);
      const answer = (await client.rest('GET', entityPath(urn), { notFound: 'undefined' })) as EntityAnswer | undefined;
      return answer && recordOf(answer);
    },
    async listProperties() {
      const records: PropertyRecord[] = [];
      let scrollId: string | undefined;
      do {
        const page = (await client.rest('GET', '/openapi/v2/entity/structuredProperty', { query: { count: PAGE, scrollId } })) as {
          entities: EntityAnswer[];
          scrollId?: string;
        };
        for (const entity of page.entities) {
          const record = recordOf(entity);
          if (record) records.push(record);
        }
        scrollId = page.scrollId;
      } while (scrollId !== undefined);
      return records;
    },
    async deleteEntity(urn, options) {
      parseUrn(urn);
      return (await client.rest('DELETE', entityPath(urn), { query: { hard: options.hard, dryRun: options.dryRun } })) as EntityDeletion;
    },
    async restoreEntity(urn) {
      parseUrn(urn);
      // Restoring is writing the status aspect (the REST family's way); a write would create a missing entity.
      if ((await client.rest('GET', entityPath(urn), { notFound: 'undefined' })) === undefined)
        throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
      await client.rest('POST', `${entityPath(urn)}/status`, { body: { removed: false } });
    },
    async createToken(input) {
      const data = await client.graphql(CREATE_TOKEN, { input });
      const created = data.createAccessToken as { accessToken: string; metadata: GraphqlTokenMetadata };
      return { accessToken: created.accessToken, metadata: metadataOf(created.metadata) };
    },
    async listTokens(input) {
      const data = await client.graphql(LIST_TOKENS, { input });
      const list = data.listAccessTokens as Omit<AccessTokenList, 'tokens'> & { tokens: GraphqlTokenMetadata[] };
      return { ...list, tokens: list.tokens.map(metadataOf) };
    },
    async revokeToken(tokenId) {
      const data = await client.graphql(REVOKE_TOKEN, { tokenId });
      return data.revokeAccessToken === true;
    },
    async readChanges(options) {
      return (await client.rest('GET', '/openapi/v2/changes', { query: { after: options.after, limit: options.limit } })) as {
        events: ChangeEvent[];
        next: string;
      };
    },
    followChanges(options) {
      return client.eventStream('/openapi/v2/changes', {}, options.after, options.signal) as AsyncIterable<ChangeEvent>;
    },
    async ingestProposals(proposals) {
      // DataHub's batch action: one chunk, checked whole and written together.
      await client.rest('POST', '/aspects', { query: { action: 'ingestProposalBatch' }, body: { proposals, async: 'false' } });
    },
    async indexSizes() {
      const answer = (await client.rest('POST', '/operations', { query: { action: 'getIndexSizes' } })) as { value: string };
      return JSON.parse(answer.value) as TimeseriesIndexSizeRecord[];
    },
    async truncateTimeseries(input) {
      const answer = (await client.rest('POST', '/operations', { query: { action: 'truncateTimeseriesAspect' }, body: input })) as {
        value: string;
      };
      if (input.dryRun !== false) return { message: answer.value };
      // A real run answers its task id alone; the status it is recorded under holds the counts it answered.
      const taskId = answer.value;
      const status = (await client.rest('POST', '/operations', { query: { action: 'getEsTaskStatus' }, body: { task: taskId } })) as {
        value: string;
      };
      const { status: recorded } = JSON.parse(status.value) as { status?: { summary?: string } };
      return { message: `${recorded?.summary ?? ''}Task id: ${taskId}.`, taskId };
    },
    exportAll(options) {
      const extras = options.with?.length ? { with: options.with.join(',') } : {};
      return client.jsonLines('/openapi/v2/export', extras) as AsyncIterable<ExportRecord>;
    },
    async importRecords(records, options = {}) {
      const body = options.initial ? { records, initial: true } : { records };
      const answer = (await client.rest('POST', '/operations', { query: { action: 'importRecords' }, body })) as {
        value: ExportCounts;
      };
      return answer.value;
    },
    ...remoteValues(client),
    async applyToMatches(input, options) {
      return (await client.rest('POST', APPLY_PATH, { body: { ...input, ...options } })) as ApplyJob | ApplyPreview;
    },
    async waitForApply(jobId, onProgress) {
      for (;;) {
        const status = (await client.rest('GET', `${APPLY_PATH}/${encodeURIComponent(jobId)}`)) as ApplyStatus;
        onProgress(status);
        if (status.state === 'DONE' || status.state === 'FAILED' || status.state === 'CANCELLED') return status;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    },
    async reindex() {
      const answer = (await client.rest('POST', '/operations', { query: { action: 'reindex' }, body: {} })) as { value: ReindexProgress };
      return answer.value;
    },
    async close() {
      // Nothing held: every call is one request.
    },
  };
}
