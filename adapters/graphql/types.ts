// GraphQL object types, snake_case as the spec's `rotate_widget_token`.
import 'reflect-metadata';
import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class UserType {
  @Field(() => ID) id!: string;
  @Field(() => String) email!: string;
  @Field(() => String) name!: string;
  @Field(() => Boolean) email_verified!: boolean;
}

@ObjectType()
export class TenantType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String) slug!: string;
  @Field(() => String) status!: string;
}

@ObjectType()
export class AuthPayload {
  @Field(() => String) token!: string;
  @Field(() => UserType) user!: UserType;
  @Field(() => TenantType) tenant!: TenantType;
  @Field(() => String) role!: string;
}

@ObjectType()
export class RegisterPayload {
  @Field(() => ID) user_id!: string;
  @Field(() => ID) tenant_id!: string;
  @Field(() => String) email!: string;
  @Field(() => Boolean, { description: 'a verification code was emailed; finish with verify_otp' }) verification_sent!: boolean;
}

@ObjectType()
export class MePayload {
  @Field(() => UserType) user!: UserType;
  @Field(() => TenantType) tenant!: TenantType;
  @Field(() => String) role!: string;
}

@ObjectType()
export class WorkspaceType {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => Boolean) is_default!: boolean;
  @Field(() => String) created_at!: string;
}

@ObjectType()
export class SettingsType {
  @Field(() => String, { nullable: true }) default_language?: string;
  @Field(() => String, { nullable: true }) timezone?: string;
  @Field(() => String, { nullable: true }) assistant_name?: string;
  @Field(() => String, { nullable: true }) assistant_instructions?: string;
  @Field(() => Boolean, { nullable: true }) widget_enabled?: boolean;
  @Field(() => Boolean, { nullable: true }) handoff_enabled?: boolean;
  @Field(() => Int, { nullable: true, description: 'whole days orchestration payloads, step outputs and error messages are kept, when the organization set it (the operator’s ORCHESTRATION_PAYLOAD_RETENTION_DAYS otherwise)' })
  orchestration_payload_retention_days?: number;
  @Field(() => Boolean, { nullable: true, description: 'whether the owner and admins are emailed (at most once an hour each) when an orchestration event is dead-lettered or expires; null: yes' })
  orchestration_alert_emails?: boolean;
  @Field(() => String, { nullable: true }) display_name?: string;
  @Field(() => String, { nullable: true }) primary_color?: string;
  @Field(() => String, { nullable: true }) logo_url?: string;
  @Field(() => String, { nullable: true }) welcome_message?: string;
  @Field(() => String, { nullable: true, description: 'the publishable key the widget embeds' }) widget_token?: string;
}

@ObjectType()
export class WidgetTokenPayload {
  @Field(() => String) widget_token!: string;
}

@ObjectType({ description: 'a closed account: when, and the organizations deleted with it' })
export class AccountClosurePayload {
  @Field(() => String) closed_at!: string;
  @Field(() => [ID]) deleted_organizations!: string[];
}

@ObjectType({ description: 'the caller’s notification preferences in the current organization (docs/notifications.md)' })
export class NotificationPreferencesType {
  @Field(() => Boolean, { description: 'the alert email when an orchestration event is dead-lettered or expires (owners and admins get it: the first of an hour at once, the rest in a digest)' })
  orchestration_alerts!: boolean;
  @Field(() => Boolean, { description: 'the email when a handoff is given up because the handoff webhook failed every attempt (owners and admins get it, at most once an hour)' })
  handoff_failures!: boolean;
  @Field(() => Boolean, { description: 'the email when a lead is given up because the CRM failed every attempt (owners and admins get it, at most once an hour)' })
  crm_failures!: boolean;
  @Field(() => Boolean, { description: 'the weekly email of the questions the assistant could not answer from the knowledge base (owners and admins get it)' })
  knowledge_gaps!: boolean;
  @Field(() => String, { nullable: true, description: 'when the caller last changed them; null while they are the defaults' }) updated_at!: string | null;
}
