// Resolvers: thin adapters over the identity and tenant use cases.
import 'reflect-metadata';
import { Arg, Ctx, Field, ID, InputType, Int, Mutation, Query, Resolver } from 'type-graphql';
import { register } from '../../application/registration/register';
import { login } from '../../application/session/login';
import { type Principal, actingContext } from '../../application/session/sessions';
import { rotateTenantWidgetToken } from '../../application/tenant/widget-token';
import { requestPasswordReset, resendVerification, resetPassword, verifyOtp } from '../../application/user/users';
import { tenantSettings, updateTenantSettings } from '../../application/tenant/tenant-queries';
import { currentAccount } from '../../application/user/account';
import { readNotificationPreferences, setNotificationPreferences } from '../../application/notification/notification-preferences';
import { closeAccount } from '../../application/user/account-closure';
import { createWorkspace, listTenantWorkspaces, renameWorkspace } from '../../application/workspace/workspaces';
import { DomainError, forbidden } from '../../domain/shared/errors';
import { ROLE_RANK, type Role } from '../../domain/membership/membership';
import type { GraphqlContext } from './context';
import { COST } from './limits';
import { AccountClosurePayload, AuthPayload, MePayload, NotificationPreferencesType, RegisterPayload, SettingsType, WidgetTokenPayload, WorkspaceType } from './types';

function principalOf(ctx: GraphqlContext, minimum: Role = 'member'): Principal {
  if (!ctx.principal) throw ctx.authError ?? new DomainError('unauthorized', 'unauthenticated', 'send Authorization: Bearer <token>');
  if (ROLE_RANK[ctx.principal.role] < ROLE_RANK[minimum]) throw forbidden('insufficient_role', `this needs the ${minimum} role or higher`);
  return ctx.principal;
}

const scoped = (ctx: GraphqlContext, principal: Principal) => actingContext(principal, ctx.request);

@InputType()
class UpdateSettingsInput {
  @Field(() => String, { nullable: true }) default_language?: string;
  @Field(() => String, { nullable: true }) timezone?: string;
  @Field(() => String, { nullable: true }) assistant_name?: string;
  @Field(() => String, { nullable: true }) assistant_instructions?: string;
  @Field(() => Boolean, { nullable: true }) widget_enabled?: boolean;
  @Field(() => Boolean, { nullable: true }) handoff_enabled?: boolean;
  @Field(() => Int, { nullable: true, description: 'whole days orchestration payloads, step outputs and error messages are kept (1 to 3650), within the operator’s ORCHESTRATION_PAYLOAD_RETENTION_DAYS' })
  orchestration_payload_retention_days?: number;
  @Field(() => Boolean, { nullable: true, description: 'false: the owner and admins are no longer emailed when an orchestration event is dead-lettered or expires (on by default; at most one email an hour each)' })
  orchestration_alert_emails?: boolean;
  @Field(() => String, { nullable: true }) display_name?: string;
  @Field(() => String, { nullable: true }) primary_color?: string;
  @Field(() => String, { nullable: true }) logo_url?: string;
  @Field(() => String, { nullable: true }) welcome_message?: string;
}

const defined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined && field !== null)) as Partial<T>;

@Resolver()
export class AuthResolver {
  @Mutation(() => RegisterPayload, { description: 'creates a user, an organization and its owner membership; emails a verification code', complexity: COST.passwordWork })
  async register(
    @Arg('email', () => String) email: string,
    @Arg('password', () => String) password: string,
    @Arg('name', () => String) name: string,
    @Arg('organization_name', () => String) organization_name: string,
    @Arg('slug', () => String, { nullable: true }) slug: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<RegisterPayload> {
    await ctx.guard('register', email);
    const result = await register(ctx.identity, { email, password, name, organization_name, slug }, ctx.request);
    return { ...result, email: email.trim().toLowerCase(), verification_sent: true };
  }

  @Mutation(() => AuthPayload, { complexity: COST.write })
  async verify_otp(@Arg('email', () => String) email: string, @Arg('code', () => String) code: string, @Ctx() ctx: GraphqlContext): Promise<AuthPayload> {
    await ctx.guard('verify_otp', email);
    return verifyOtp(ctx.identity, email, code, ctx.request);
  }

  @Mutation(() => Boolean, { description: 'sends a new verification code; answers true whether or not the email exists', complexity: COST.write })
  async resend_verification(@Arg('email', () => String) email: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await ctx.guard('resend_verification', email);
    await resendVerification(ctx.identity, email, ctx.request);
    return true;
  }

  @Mutation(() => AuthPayload, { complexity: COST.passwordWork })
  async login(
    @Arg('email', () => String) email: string,
    @Arg('password', () => String) password: string,
    @Arg('tenant_id', () => ID, { nullable: true }) tenant_id: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<AuthPayload> {
    // Per IP every attempt counts; per email only failures do (abuse-controls.ts).
    await ctx.guard('login', null);
    return login(ctx.identity, email, password, tenant_id, ctx.request, ctx.loginFailures(email));
  }

  @Mutation(() => Boolean, { description: 'answers true whether or not the email exists', complexity: COST.write })
  async request_password_reset(@Arg('email', () => String) email: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await ctx.guard('request_password_reset', email);
    await requestPasswordReset(ctx.identity, email, ctx.request);
    return true;
  }

  @Mutation(() => Boolean, { description: 'sets a new password and revokes every session', complexity: COST.passwordWork })
  async reset_password(
    @Arg('email', () => String) email: string,
    @Arg('code', () => String) code: string,
    @Arg('new_password', () => String) new_password: string,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await ctx.guard('reset_password', email);
    await resetPassword(ctx.identity, email, code, new_password, ctx.request);
    return true;
  }
}

@Resolver()
export class ConsoleResolver {
  @Query(() => MePayload)
  async me(@Ctx() ctx: GraphqlContext): Promise<MePayload> {
    return currentAccount(ctx.identity, principalOf(ctx));
  }

  @Mutation(() => AccountClosurePayload, {
    description:
      'closes the caller’s own account for good, as POST /api/v1/me/close does (docs/personal-data.md, "Closing an account"): its email and name erased, its organizations left, those it is the only member of deleted when delete_organizations is true',
    complexity: COST.passwordWork,
  })
  async close_account(
    @Arg('password', () => String) password: string,
    @Arg('delete_organizations', () => Boolean, { nullable: true }) deleteOrganizations: boolean | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<AccountClosurePayload> {
    const request = { password, ...(typeof deleteOrganizations === 'boolean' ? { delete_organizations: deleteOrganizations } : {}) };
    return closeAccount({ ...ctx.identity, logger: ctx.logger }, ctx.passwordGuard, principalOf(ctx), request, ctx.request);
  }

  @Query(() => NotificationPreferencesType, { description: 'as GET /api/v1/me/notifications' })
  async notification_preferences(@Ctx() ctx: GraphqlContext): Promise<NotificationPreferencesType> {
    return (await readNotificationPreferences(ctx.identity, principalOf(ctx))).value;
  }

  @Mutation(() => NotificationPreferencesType, { description: 'as PATCH /api/v1/me/notifications: a preference left out keeps its value', complexity: COST.write })
  async update_notification_preferences(
    @Arg('orchestration_alerts', () => Boolean, { nullable: true }) orchestrationAlerts: boolean | null | undefined,
    @Arg('handoff_failures', () => Boolean, { nullable: true }) handoffFailures: boolean | null | undefined,
    @Arg('crm_failures', () => Boolean, { nullable: true }) crmFailures: boolean | null | undefined,
    @Arg('knowledge_gaps', () => Boolean, { nullable: true }) knowledgeGaps: boolean | null | undefined,
    @Ctx() ctx: GraphqlContext,
  ): Promise<NotificationPreferencesType> {
    const preferences = {
      ...(typeof orchestrationAlerts === 'boolean' ? { orchestration_alerts: orchestrationAlerts } : {}),
      ...(typeof handoffFailures === 'boolean' ? { handoff_failures: handoffFailures } : {}),
      ...(typeof crmFailures === 'boolean' ? { crm_failures: crmFailures } : {}),
      ...(typeof knowledgeGaps === 'boolean' ? { knowledge_gaps: knowledgeGaps } : {}),
    };
    return (await setNotificationPreferences(ctx.identity, principalOf(ctx), preferences, ctx.request)).value;
  }

  @Query(() => [WorkspaceType], { complexity: COST.list })
  async workspaces(@Ctx() ctx: GraphqlContext): Promise<WorkspaceType[]> {
    return listTenantWorkspaces(ctx.identity, principalOf(ctx).tenant_id);
  }

  @Mutation(() => WorkspaceType, { complexity: COST.write })
  async create_workspace(@Arg('name', () => String) name: string, @Ctx() ctx: GraphqlContext): Promise<WorkspaceType> {
    return createWorkspace(ctx.identity, principalOf(ctx, 'admin'), name, ctx.request);
  }

  @Mutation(() => WorkspaceType, { complexity: COST.write })
  async rename_workspace(@Arg('id', () => ID) id: string, @Arg('name', () => String) name: string, @Ctx() ctx: GraphqlContext): Promise<WorkspaceType> {
    return renameWorkspace(ctx.identity, principalOf(ctx, 'admin'), id, name, ctx.request);
  }

  @Query(() => SettingsType)
  async settings(@Ctx() ctx: GraphqlContext): Promise<SettingsType> {
    return tenantSettings(ctx.identity, principalOf(ctx));
  }

  @Mutation(() => SettingsType, { complexity: COST.write })
  async update_settings(@Arg('input', () => UpdateSettingsInput) input: UpdateSettingsInput, @Ctx() ctx: GraphqlContext): Promise<SettingsType> {
    return updateTenantSettings(ctx.identity, principalOf(ctx, 'admin'), defined({ ...input }), ctx.request);
  }

  @Mutation(() => WidgetTokenPayload, { description: 'a new widget token; the old one stops working', complexity: COST.write })
  async rotate_widget_token(@Ctx() ctx: GraphqlContext): Promise<WidgetTokenPayload> {
    const principal = principalOf(ctx, 'admin');
    return { widget_token: await rotateTenantWidgetToken(ctx.identity, principal.tenant_id, scoped(ctx, principal)) };
  }
}
