// Platform settings (spec 4.16, `GET, PUT /api/v1/admin/settings`): the super admin reads and
// changes them; sign-up asks whether it is open. The gate reads the aggregate's own stream,
// not the read model, so closing or reopening sign-up applies to the very next request.

import {
  DEFAULT_PLATFORM_SETTINGS,
  PLATFORM_SETTINGS_ID,
  type PlatformSettings,
  type PlatformSettingsChanges,
  type PlatformSettingsCommand,
  type PlatformSettingsEvent,
  type PlatformSettingsState,
  platformSettingsDecider,
  platformSettingsEvents,
  platformSettingsStream,
} from '../../domain/platform-settings/platform-settings';
import { forbidden, invalid } from '../../domain/shared/errors';
import { PLANS, type PlanDocument } from '../../projections/plans';
import { PLATFORM_SETTINGS, type PlatformSettingsDocument, defaultPlatformSettingsDocument } from '../../projections/platform-settings';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate, revisionExpectedBy } from '../command-handling/handle-command';
import { type ReadModelDependencies, type ReadYourWritesDependencies, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, versionOfRevision } from '../shared/versions';

export const platformSettingsAggregate: Aggregate<PlatformSettingsCommand, PlatformSettingsEvent, PlatformSettingsState> = {
  decider: platformSettingsDecider,
  events: platformSettingsEvents,
};

/** The settings as the super admin sees them: every setting, and when and by whom they last changed. */
export type PlatformSettingsView = PlatformSettings & { updated_at: string | null; updated_by: string | null };

function viewOf(doc: PlatformSettingsDocument): Versioned<PlatformSettingsView> {
  const settings = Object.fromEntries(Object.keys(DEFAULT_PLATFORM_SETTINGS).map((field) => [field, doc[field]])) as PlatformSettings;
  return { value: { ...DEFAULT_PLATFORM_SETTINGS, ...settings, updated_at: doc.updated_at, updated_by: doc.updated_by }, version: versionOfRevision(doc.revision) };
}

/** The platform settings with their version (ETag); defaults before any change. */
export async function readPlatformSettings(deps: ReadModelDependencies): Promise<Versioned<PlatformSettingsView>> {
  const doc = await deps.readStore.collection<PlatformSettingsDocument>(PLATFORM_SETTINGS).get(PLATFORM_SETTINGS_ID);
  return viewOf(doc ?? defaultPlatformSettingsDocument());
}

/** Changes the settings given (only those that differ are recorded), as the super admin; 412 when If-Match names another version. */
export async function changePlatformSettings(
  deps: CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies,
  adminId: string,
  changes: PlatformSettingsChanges,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<PlatformSettingsView>> {
  if (changes.default_plan_code !== undefined) await requireSellablePlan(deps, changes.default_plan_code);
  const stream = platformSettingsStream();
  const expectedRevision = await revisionExpectedBy(deps, platformSettingsAggregate, stream, 'platform settings', preconditions);
  const result = await handleCommand(
    deps,
    platformSettingsAggregate,
    stream,
    { type: 'ChangePlatformSettings', data: { changes } },
    { ...context, tenant_id: null, actor: { kind: 'admin', id: adminId } },
    { expectedRevision },
  );
  return readBackChange(deps, result, 'the change of the platform settings', () => readPlatformSettings(deps));
}

/** A default plan must be one a tenant could buy: sellable. */
async function requireSellablePlan(deps: ReadModelDependencies, code: string): Promise<void> {
  const found = await deps.readStore.collection<PlanDocument>(PLANS).find({ where: { code }, limit: 1 });
  if (found.items[0]?.status !== 'sellable') throw invalid('unknown_plan', `default_plan_code: no sellable plan has the code ${code}`, 'default_plan_code');
}

/** The current settings, from the stream itself (always current). */
export async function currentPlatformSettings(deps: Pick<CommandDependencies, 'eventStore'>): Promise<PlatformSettings> {
  return (await loadAggregate(deps, platformSettingsAggregate, platformSettingsStream())).state.settings;
}

/** 403 `signup_closed` while the super admin has closed self-service sign-up. */
export async function requireSignupOpen(deps: Pick<CommandDependencies, 'eventStore'>): Promise<void> {
  if (!(await currentPlatformSettings(deps)).signup_open) throw forbidden('signup_closed', 'sign-up is closed on this platform; ask for an invitation');
}
