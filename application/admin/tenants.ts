// The super admin's tenant management (spec 4.16): list and search, create with an invited
// owner, read, update, soft-delete, suspend and unsuspend. Every write names the admin as its
// actor, in the tenant's own audit log.
//
// Search (`q`) is a case-insensitive prefix of the slug or of the name. The read store filters
// by ranges and conjunctions only, so the two prefixes are two queries, each in the list's
// order (newest first) and each asked for a whole page, merged here: the first `limit` of the
// merge never pass the last item of a query that has more (that query alone gave `limit`), so
// nothing is skipped, and the cursor is the last tenant shown, from which both queries resume.

import { DomainError, invalid, notFound } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import type { Branding, TenantSettings } from '../../domain/tenant/events';
import { type TenantState, tenantStream } from '../../domain/tenant/tenant';
import { emailProblem, nameProblem, normalizeEmail } from '../../domain/user/user';
import { TENANTS, type TenantDocument, tenantNameKey } from '../../projections/tenants';
import { type CommandDependencies, loadAggregate } from '../command-handling/handle-command';
import { type InvitationDependencies, type InvitationView, inviteOwner } from '../invitation/invitations';
import { type Collection, type FindOptions, InvalidCursorError, type Page, type Where, encodeCursor, queryKeyOf } from '../ports/read-store';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { TENANT_SLUG_SCOPE, createTenant, deleteTenant, suspendTenant, tenantAggregate, unsuspendTenant, updateTenant } from '../tenant/tenant-commands';
import { openTenantDefaults } from '../tenant/widget-token';
import type { AdminPrincipal } from './admin-auth';

export const TENANT_STATUSES = ['active', 'suspended', 'deleted'] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];

/** Longest search text: longer than any slug or name. */
export const MAX_SEARCH_LENGTH = 100;

/** A tenant in the super admin's list. */
export interface AdminTenantSummary {
  id: string;
  name: string;
  slug: string;
  status: TenantStatus;
  suspended_reason: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** One tenant as the super admin reads it: the summary with its branding and settings (never its widget token). */
export interface AdminTenantView extends AdminTenantSummary {
  branding: Branding;
  settings: TenantSettings;
}

export interface AdminTenantFilter {
  q?: string;
  status?: TenantStatus;
}

export interface CreateTenantWithOwnerInput {
  name: string;
  slug: string;
  owner_email: string;
  owner_name?: string;
}

export interface TenantChanges {
  name?: string;
  branding?: Branding;
  settings?: TenantSettings;
}

type TenantWriteDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies;

const summaryOf = (doc: TenantDocument): AdminTenantSummary => ({
  id: doc.id,
  name: doc.name,
  slug: doc.slug,
  status: doc.status,
  suspended_reason: doc.suspended_reason,
  created_at: doc.created_at,
  updated_at: doc.updated_at,
  // Documents of version 1 of the projection had no such field; they are rebuilt, this is for the meantime.
  deleted_at: doc.deleted_at ?? null,
});

const viewOf = (doc: TenantDocument): AdminTenantView => ({ ...summaryOf(doc), branding: doc.branding as Branding, settings: doc.settings as TenantSettings });

const tenantNotFound = (): DomainError => notFound('tenant_not_found', 'no such tenant');

const asAdmin = (admin: AdminPrincipal, tenantId: string, context: RequestContext): RequestContext => ({ ...context, tenant_id: tenantId, actor: { kind: 'admin', id: admin.admin_id } });

// ------------------------------------------------------------------------------ reads

/** Tenants, newest first, filtered by status and searched by slug or name prefix. */
export async function listTenantsForAdmin(deps: ReadModelDependencies, filter: AdminTenantFilter, page: { limit?: number; cursor?: string }): Promise<Page<AdminTenantSummary>> {
  const tenants = deps.readStore.collection<TenantDocument>(TENANTS);
  const where: Where = filter.status ? { status: filter.status } : {};
  const q = filter.q === undefined ? '' : tenantNameKey(filter.q.trim());
  const found = q === '' ? await tenants.find({ where, sort: NEWEST_FIRST, ...page }) : await searchByPrefix(tenants, where, q, page);
  return { items: found.items.map(summaryOf), next_cursor: found.next_cursor };
}

/** One tenant with its version (ETag); 404 for an id that is no tenant. */
export async function getTenantForAdmin(deps: ReadModelDependencies, tenantId: string): Promise<Versioned<AdminTenantView>> {
  const doc = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!doc) throw tenantNotFound();
  return { value: viewOf(doc), version: versionOfRevision(doc.revision) };
}

const NEWEST_FIRST = { field: 'created_at', direction: 'desc' } as const;
/** Above every character, so `[q, q + PREFIX_END)` holds exactly the texts that start with q (stores compare UTF-8 bytes). */
const PREFIX_END = '\u{10FFFF}';
const SEARCH_CURSOR = 'tenant-search';

/** Whether `a` comes before `b` newest first, ties by id descending: the stores' order. */
const before = (a: TenantDocument, b: TenantDocument): boolean => a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);

function decodeSearchCursor(cursor: string): { created_at: string; id: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 3 && decoded[0] === SEARCH_CURSOR && typeof decoded[1] === 'string' && typeof decoded[2] === 'string') {
      return { created_at: decoded[1], id: decoded[2] };
    }
  } catch {
    // falls through to the typed error
  }
  throw new InvalidCursorError();
}

const encodeSearchCursor = (doc: TenantDocument): string => Buffer.from(JSON.stringify([SEARCH_CURSOR, doc.created_at, doc.id])).toString('base64url');

async function searchByPrefix(tenants: Collection<TenantDocument>, where: Where, q: string, page: { limit?: number; cursor?: string }): Promise<Page<TenantDocument>> {
  const limit = page.limit ?? 50;
  const after = page.cursor === undefined ? null : decodeSearchCursor(page.cursor);
  const range = { gte: q, lt: `${q}${PREFIX_END}` };
  const pages = await Promise.all(
    [{ ...where, slug: range }, { ...where, name_key: range }].map(async (branch) => {
      const options: FindOptions = { where: branch, sort: NEWEST_FIRST, limit };
      // Each query resumes after the last tenant shown, whether or not that tenant was one of its own.
      const cursor = after ? encodeCursor(queryKeyOf(TENANTS, options), after.created_at, after.id) : undefined;
      return tenants.find({ ...options, cursor });
    }),
  );
  const merged = new Map<string, TenantDocument>();
  for (const found of pages) for (const doc of found.items) merged.set(doc.id, doc);
  const items = [...merged.values()].sort((a, b) => (before(a, b) ? -1 : 1));
  const shown = items.slice(0, limit);
  const more = items.length > shown.length || pages.some((found) => found.next_cursor !== null);
  return { items: shown, next_cursor: more && shown.length > 0 ? encodeSearchCursor(shown[shown.length - 1]) : null };
}

// ----------------------------------------------------------------------------- writes

/**
 * Creates a tenant as the super admin does: the slug reserved (409 `slug_taken`), the tenant
 * with its default workspace and widget token, then the owner invited by email with the role
 * `owner`. Everything is checked before anything is written. Under an Idempotency-Key every
 * id derives from the key, so a retry after a crash finishes the same tenant and invitation.
 */
export async function createTenantWithOwner(
  deps: InvitationDependencies,
  admin: AdminPrincipal,
  input: CreateTenantWithOwnerInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<{ tenant: AdminTenantView; invitation: InvitationView }> {
  const ownerEmail = normalizeEmail(input.owner_email);
  if (emailProblem(ownerEmail)) throw invalid('invalid_email', 'owner_email must be a valid address (name@example.com)', 'owner_email');
  const nameInvalid = input.owner_name === undefined ? null : nameProblem(input.owner_name, 'owner_name');
  if (nameInvalid) throw nameInvalid;
  let created: Awaited<ReturnType<typeof createTenant>>;
  try {
    created = await createTenant(deps, { name: input.name, slug: input.slug }, { ...context, actor: { kind: 'admin', id: admin.admin_id } }, options);
  } catch (error) {
    if (error instanceof DomainError && error.code === `${TENANT_SLUG_SCOPE}_taken`) throw new DomainError('conflict', 'slug_taken', `the slug ${input.slug} is taken`, 'slug');
    throw error;
  }
  const tenantId = created.tenant_id;
  const scoped = asAdmin(admin, tenantId, context);
  // Keyed on the tenant, so that a repeat appends nothing twice.
  const step = (name: string): string => `tenant:${tenantId}:${name}`;
  const workspaceId = deps.ids.fromKey(step('workspace'));
  await openTenantDefaults(deps, { tenantId, workspaceId }, step, scoped);
  const owner = input.owner_name === undefined ? { email: ownerEmail } : { email: ownerEmail, name: normalizeText(input.owner_name) };
  const invitation = await inviteOwner(deps, admin.admin_id, tenantId, owner, context, options);
  return { tenant: (await getTenantForAdmin(deps, tenantId)).value, invitation: invitation.value };
}

/** The tenant's state and revision from its stream; 404 when it does not exist. */
async function existingTenant(deps: Pick<CommandDependencies, 'eventStore'>, tenantId: string): Promise<{ state: TenantState; revision: number }> {
  const loaded = await loadAggregate(deps, tenantAggregate, tenantStream(tenantId));
  if (loaded.state.status === 'absent') throw tenantNotFound();
  return loaded;
}

/** The expected revision an If-Match names, checked against the stream (404 first for a tenant that does not exist). */
async function expectedRevision(deps: Pick<CommandDependencies, 'eventStore'>, tenantId: string, preconditions: WritePreconditions): Promise<number | undefined> {
  const { revision } = await existingTenant(deps, tenantId);
  return expectedRevisionOf('tenant', preconditions.expectedVersion, revision);
}

async function answered(deps: TenantWriteDependencies, tenantId: string, written: Written | null): Promise<Versioned<AdminTenantView>> {
  return readBackChange(deps, written, 'the change of the tenant', () => getTenantForAdmin(deps, tenantId));
}

/** Changes name, branding and settings together (409 `tenant_deleted` once deleted). */
export async function updateTenantAsAdmin(
  deps: TenantWriteDependencies,
  admin: AdminPrincipal,
  tenantId: string,
  changes: TenantChanges,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<AdminTenantView>> {
  const revision = await expectedRevision(deps, tenantId, preconditions);
  const result = await updateTenant(deps, tenantId, changes, asAdmin(admin, tenantId, context), { expectedRevision: revision });
  return answered(deps, tenantId, result);
}

/** Soft-deletes the tenant; deleting it again is 409 `tenant_deleted`. */
export async function deleteTenantAsAdmin(deps: TenantWriteDependencies, admin: AdminPrincipal, tenantId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  const revision = await expectedRevision(deps, tenantId, preconditions);
  const result = await deleteTenant(deps, tenantId, asAdmin(admin, tenantId, context), { expectedRevision: revision });
  await deps.readYourWrites(result.position);
}

/** Suspends the tenant (409 `tenant_suspended` when it already is, `tenant_deleted` once deleted). */
export async function suspendTenantAsAdmin(deps: TenantWriteDependencies, admin: AdminPrincipal, tenantId: string, reason: string, context: RequestContext): Promise<Versioned<AdminTenantView>> {
  await existingTenant(deps, tenantId);
  const result = await suspendTenant(deps, tenantId, reason, asAdmin(admin, tenantId, context));
  return answered(deps, tenantId, result);
}

/** Lifts a suspension (409 `tenant_not_suspended` when there is none, `tenant_deleted` once deleted). */
export async function unsuspendTenantAsAdmin(deps: TenantWriteDependencies, admin: AdminPrincipal, tenantId: string, context: RequestContext): Promise<Versioned<AdminTenantView>> {
  await existingTenant(deps, tenantId);
  const result = await unsuspendTenant(deps, tenantId, asAdmin(admin, tenantId, context));
  return answered(deps, tenantId, result);
}
