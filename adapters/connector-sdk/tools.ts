// What a connector author writes: tool definitions (spec 2.4), their handlers, the context
// a handler receives, the outcomes it may return, and the metadata a connector advertises
// (spec 2.5). Field names that travel on the wire stay snake_case as in the spec.
import type { ConnectorStorage } from './config';
import { ConnectorError } from './errors';
import type { JsonObject, OrganizationMetadata, ProtocolRequest } from './protocol';
import type { InputSchema } from './schema-validation';

/** A tool's `auth` value; `none` and `optional` are the values seen in the spec. */
export type ToolAuth = 'none' | 'optional' | (string & {});

/** Tool parameters: the request's `parameters` object, already checked against `input_schema`. */
export type ToolParameters = Record<string, unknown>;

/** What a tool handler receives (spec 2.4 plus the request's routing fields). */
export interface ToolContext<P extends ToolParameters = ToolParameters> {
  /** The request's `parameters`, valid against the tool's `input_schema` (empty object when absent). */
  readonly parameters: P;
  /** `x-svc-trace-id` when the platform forwarded one, otherwise the body's `request_id`. */
  readonly trace_id: string;
  readonly request_id: string;
  readonly organization_id: string | undefined;
  readonly conversation_id: string | undefined;
  readonly channel: string | undefined;
  readonly identity: JsonObject | undefined;
  /** Prior authentication context the platform holds for this conversation. */
  readonly authentication: JsonObject | undefined;
  /** Customer Hub person snapshot; null when the platform knows there is none. */
  readonly person: JsonObject | null | undefined;
  readonly platform: JsonObject | undefined;
  /**
   * Storage of the installation scope. Throws ConnectorError `configuration_error` when the
   * connector has none: an external connector uses its own database.
   */
  readonly storage: ConnectorStorage;
}

/** A successful tool call (`{type:'result'}`). */
export interface ToolResult {
  output: Record<string, unknown>;
  /** Authentication the platform should remember for the conversation (e.g. after an OTP). */
  authentication_context?: Record<string, unknown>;
  /** Changes to the Customer Hub person, applied by the platform. */
  person_mutations?: unknown;
}

/**
 * A challenge (`{type:'challenge'}`): the platform shows `challenge` to the user and later
 * sends `tool.resume` with the answer. `state` (any JSON value) is sealed into the resume
 * token and handed back to the tool's `resume` handler; it is never visible to the caller.
 */
export interface ToolChallenge {
  challenge: Record<string, unknown>;
  state?: unknown;
}

/** Everything a handler may return; it may also throw a ConnectorError. */
export type ToolOutcome = ToolResult | ToolChallenge | ConnectorError;

/** Runs a tool call (`tool.invoke`). */
export type ToolHandler<P extends ToolParameters = ToolParameters> = (context: ToolContext<P>) => ToolOutcome | Promise<ToolOutcome>;

/** What `tool.resume` hands the resume handler: the sealed state and the user's answer. */
export interface ToolResumption {
  state: unknown;
  challenge_response: string;
}

/** Continues a challenged call (`tool.resume`); may answer, fail, or challenge again. */
export type ToolResumeHandler<P extends ToolParameters = ToolParameters> = (
  context: ToolContext<P>,
  resumption: ToolResumption,
) => ToolOutcome | Promise<ToolOutcome>;

/** A tool registration (spec 2.4); the name is the first argument of `connector.tool()`. */
export interface ToolDefinition<P extends ToolParameters = ToolParameters> {
  description: string;
  /** Default `none`. */
  auth?: ToolAuth;
  /** false keeps the tool off customer chat (manager and approval tools). Default true. */
  chat?: boolean;
  /** JSON Schema (2020-12) the parameters are checked against. Default: an object with no declared properties. */
  input_schema?: InputSchema;
  handler: ToolHandler<P>;
  /** Required when the handler can return a challenge. */
  resume?: ToolResumeHandler<P>;
}

/** An advertised entry whose structure the spec leaves open (flows, events, webhooks, schedules, marketing). */
export type AdvertisedEntry = Record<string, unknown>;

/** What a connector advertises beside its tools on `capabilities.list` (spec 2.3, 2.5); never executed by the connector. */
export interface AdvertisedCapabilities {
  flows?: readonly AdvertisedEntry[];
  events?: readonly AdvertisedEntry[];
  webhooks?: readonly AdvertisedEntry[];
  schedules?: readonly AdvertisedEntry[];
  marketing?: readonly AdvertisedEntry[];
  organization?: OrganizationMetadata;
}

/** Tells a challenge from a result; a ConnectorError is checked first by the caller. */
export function isToolChallenge(outcome: ToolResult | ToolChallenge): outcome is ToolChallenge {
  return 'challenge' in outcome;
}

function storageUnavailable(): never {
  throw new ConnectorError(
    'configuration_error',
    'No installation scope: storage is only available to managed installs; an external connector uses its own database',
  );
}

/**
 * The tool context of one request. A class rather than an object literal so the `storage`
 * getter lives on the prototype: no closure is allocated per request.
 */
export class RequestToolContext<P extends ToolParameters = ToolParameters> implements ToolContext<P> {
  readonly organization_id: string | undefined;
  readonly conversation_id: string | undefined;
  readonly channel: string | undefined;
  readonly identity: JsonObject | undefined;
  readonly authentication: JsonObject | undefined;
  readonly person: JsonObject | null | undefined;
  readonly platform: JsonObject | undefined;
  readonly request_id: string;

  constructor(
    request: ProtocolRequest,
    readonly parameters: P,
    readonly trace_id: string,
    private readonly installationStorage: ConnectorStorage | undefined,
  ) {
    this.request_id = request.request_id;
    this.organization_id = request.organization_id ?? undefined;
    this.conversation_id = request.conversation_id ?? undefined;
    this.channel = request.channel ?? undefined;
    this.identity = request.identity ?? undefined;
    this.authentication = request.authentication ?? undefined;
    // null is meaningful for `person` (spec 2.2: "object or null"), so it is kept.
    this.person = request.person;
    this.platform = request.platform ?? undefined;
  }

  get storage(): ConnectorStorage {
    return this.installationStorage ?? storageUnavailable();
  }
}
