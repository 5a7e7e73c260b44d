// Resolvers: thin adapters over the identity and tenant use cases.
import 'reflect-metadata';
import { Arg, Ctx, Field, ID, InputType, Mutation, Query, Resolver } from 'type-graphql';
import * as identity from '../../application/identity/identity';
import { workspaceAggregate } from '../../application/identity/identity';
import { handleCommand } from '../../application/command-handling/handle-command';
import { changeTenantBranding, changeTenantSettings } from '../../application/tenant/tenant-commands';
import { DomainError, forbidden, notFound } from '../../domain/shared/errors';
import { ROLE_RANK, type Role } from '../../domain/membership/membership';
import { workspaceStream } from '../../domain/workspace/workspace';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { USERS, type UserDocument } from '../../projections/users';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import type { GraphqlContext } from './context';
import { COST } from './limits';
import { AuthPayload, MePayload, RegisterPayload, SettingsType, WidgetTokenPayload, WorkspaceType } from './types';

function principalOf(ctx: GraphqlContext, minimum: Role = 'member'): identity.Principal {
  if (!ctx.principal) throw ctx.authError ?? new DomainError('unauthorized', 'unauthenticated', 'send Authorization: Bearer <token>');
  if (ROLE_RANK[ctx.principal.role] < ROLE_RANK[minimum]) throw forbidden('insufficient_role', `this needs the ${minimum} role or higher`);
  return ctx.principal;
}

function scoped(ctx: GraphqlContext, principal: identity.Principal) {
  return { ...ctx.request, tenant_id: principal.tenant_id, actor: { kind: 'user' as const, id: principal.user_id } };
}

const toWorkspace = (doc: WorkspaceDocument): WorkspaceType => ({ id: doc.id, name: doc.name, is_default: doc.is_default, created_at: doc.created_at });

@InputType()
class UpdateSettingsInput {
  @Field(() => String, { nullable: true }) default_language?: string;
  @Field(() => String, { nullable: true }) timezone?: string;
  @Field(() => String, { nullable: true }) assistant_name?: string;
  @Field(() => String, { nullable: true }) assistant_instructions?: string;
  @Field(() => Boolean, { nullable: true }) widget_enabled?: boolean;
  @Field(() => Boolean, { nullable: true }) handoff_enabled?: boolean;
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
    const result = await identity.register(ctx.identity, { email, password, name, organization_name, slug }, ctx.request);
    return { ...result, email: email.trim().toLowerCase(), verification_sent: true };
  }

  @Mutation(() => AuthPayload, { complexity: COST.write })
  async verify_otp(@Arg('email', () => String) email: string, @Arg('code', () => String) code: string, @Ctx() ctx: GraphqlContext): Promise<AuthPayload> {
    await ctx.guard('verify_otp', email);
    return identity.verifyOtp(ctx.identity, email, code, ctx.request);
  }

  @Mutation(() => Boolean, { description: 'sends a new verification code; answers true whether or not the email exists', complexity: COST.write })
  async resend_verification(@Arg('email', () => String) email: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await ctx.guard('resend_verification', email);
    await identity.resendVerification(ctx.identity, email, ctx.request);
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
    return identity.login(ctx.identity, email, password, tenant_id, ctx.request, ctx.loginFailures(email));
  }

  @Mutation(() => Boolean, { description: 'answers true whether or not the email exists', complexity: COST.write })
  async request_password_reset(@Arg('email', () => String) email: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await ctx.guard('request_password_reset', email);
    await identity.requestPasswordReset(ctx.identity, email, ctx.request);
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
    await identity.resetPassword(ctx.identity, email, code, new_password, ctx.request);
    return true;
  }
}

@Resolver()
export class ConsoleResolver {
  @Query(() => MePayload)
  async me(@Ctx() ctx: GraphqlContext): Promise<MePayload> {
    const principal = principalOf(ctx);
    const [user, tenant] = await Promise.all([
      ctx.identity.readStore.collection<UserDocument>(USERS).get(principal.user_id),
      ctx.identity.readStore.collection<TenantDocument>(TENANTS).get(principal.tenant_id),
    ]);
    if (!user || !tenant) throw notFound('not_found', 'your account is not available');
    return { user, tenant, role: principal.role };
  }

  @Query(() => [WorkspaceType], { complexity: COST.list })
  async workspaces(@Ctx() ctx: GraphqlContext): Promise<WorkspaceType[]> {
    const principal = principalOf(ctx);
    const page = await ctx.identity.readStore
      .collection<WorkspaceDocument>(WORKSPACES)
      .find({ where: { tenant_id: principal.tenant_id }, sort: { field: 'created_at', direction: 'asc' }, limit: 1000 });
    return page.items.map(toWorkspace);
  }

  @Mutation(() => WorkspaceType, { complexity: COST.write })
  async create_workspace(@Arg('name', () => String) name: string, @Ctx() ctx: GraphqlContext): Promise<WorkspaceType> {
    const principal = principalOf(ctx, 'admin');
    const workspaceId = ctx.identity.ids.newId();
    const result = await handleCommand(
      ctx.identity,
      workspaceAggregate,
      workspaceStream(workspaceId),
      { type: 'CreateWorkspace', data: { tenant_id: principal.tenant_id, workspace_id: workspaceId, name, is_default: false } },
      scoped(ctx, principal),
    );
    await ctx.identity.readYourWrites(result.position);
    const doc = await ctx.identity.readStore.collection<WorkspaceDocument>(WORKSPACES).get(workspaceId);
    if (!doc) throw new Error('workspace read model lags');
    return toWorkspace(doc);
  }

  @Mutation(() => WorkspaceType, { complexity: COST.write })
  async rename_workspace(@Arg('id', () => ID) id: string, @Arg('name', () => String) name: string, @Ctx() ctx: GraphqlContext): Promise<WorkspaceType> {
    const principal = principalOf(ctx, 'admin');
    const workspaces = ctx.identity.readStore.collection<WorkspaceDocument>(WORKSPACES);
    const current = await workspaces.get(id);
    if (!current || current.tenant_id !== principal.tenant_id) throw notFound('workspace_not_found', 'no such workspace');
    const result = await handleCommand(ctx.identity, workspaceAggregate, workspaceStream(id), { type: 'RenameWorkspace', data: { name } }, scoped(ctx, principal));
    await ctx.identity.readYourWrites(result.position);
    return toWorkspace((await workspaces.get(id)) ?? current);
  }

  @Query(() => SettingsType)
  async settings(@Ctx() ctx: GraphqlContext): Promise<SettingsType> {
    const principal = principalOf(ctx);
    const tenant = await ctx.identity.readStore.collection<TenantDocument>(TENANTS).get(principal.tenant_id);
    if (!tenant) throw notFound('tenant_not_found', 'no such tenant');
    const isAdmin = ROLE_RANK[principal.role] >= ROLE_RANK.admin;
    return {
      ...tenant.settings,
      ...tenant.branding,
      widget_token: isAdmin && tenant.widget_token_sealed ? ctx.identity.secrets.open(tenant.widget_token_sealed) : undefined,
    } as SettingsType;
  }

  @Mutation(() => SettingsType, { complexity: COST.write })
  async update_settings(@Arg('input', () => UpdateSettingsInput) input: UpdateSettingsInput, @Ctx() ctx: GraphqlContext): Promise<SettingsType> {
    const principal = principalOf(ctx, 'admin');
    const { display_name, primary_color, logo_url, welcome_message, ...settings } = defined({ ...input });
    const context = scoped(ctx, principal);
    const branding = defined({ display_name, primary_color, logo_url, welcome_message });
    const first = Object.keys(settings).length ? await changeTenantSettings(ctx.identity, principal.tenant_id, settings, context) : null;
    const second = Object.keys(branding).length ? await changeTenantBranding(ctx.identity, principal.tenant_id, branding, context) : null;
    await ctx.identity.readYourWrites(second?.position ?? first?.position ?? null);
    return this.settings(ctx);
  }

  @Mutation(() => WidgetTokenPayload, { description: 'a new widget token; the old one stops working', complexity: COST.write })
  async rotate_widget_token(@Ctx() ctx: GraphqlContext): Promise<WidgetTokenPayload> {
    const principal = principalOf(ctx, 'admin');
    return { widget_token: await identity.rotateTenantWidgetToken(ctx.identity, principal.tenant_id, scoped(ctx, principal)) };
  }
}
