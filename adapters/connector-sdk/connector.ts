// The connector: tool registry, advertised capabilities and the request pipeline of spec
// 4.1. Checks run in this order, each answering before the next is tried:
//   1. method is POST and path is the endpoint path   else 404 {error:'not_found'}
//   2. body size within maxBodyBytes                   else 413 invalid_request
//   3. signature and timestamp (also when absent)      else 401 invalid_signature
//   4. x-svc-protocol header, when present, is ours    else 400 protocol_mismatch
//   5. body is JSON                                    else 400 invalid_request
//   6. dispatch on `type`: protocol errors are 200 {type:'error'}; uncaught errors 500.
// The signature is checked before anything reads the body, so an unsigned caller learns
// nothing but 401; size comes first because it is checked before the body is even buffered.
import * as t from 'io-ts';
import { resolveConnectorConfig, type ConnectorConfig, type ConnectorOptions } from './config';
import { CONNECTOR_ERROR_CODES, ConnectorConfigurationError, ConnectorError } from './errors';
import { PROTOCOL_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, TRACE_ID_HEADER } from './headers';
import { type ConnectorServer, startListener } from './http-listener';

export type { ConnectorServer } from './http-listener';
import {
  OrganizationMetadata,
  ProtocolRequest,
  firstErrorPath,
  type CapabilitiesListResponse,
  type ResultResponse,
  type ToolDescriptor,
} from './protocol';
import {
  BROKEN_JSON,
  INTERNAL_ERROR,
  NOT_FOUND,
  PROTOCOL_HEADER_MISMATCH,
  SIGNATURE_REFUSED,
  errorResponse,
  jsonResponse,
  payloadTooLarge,
  type ConnectorHttpResponse,
} from './responses';
import { InProcessResumeTokenLedger, ResumeTokenSealer } from './resume-tokens';
import { compileInputSchema, type InputSchema, type InputValidator } from './schema-validation';
import { verifySignature } from './signing';
import {
  RequestToolContext,
  isToolChallenge,
  type AdvertisedCapabilities,
  type AdvertisedEntry,
  type ToolDefinition,
  type ToolHandler,
  type ToolOutcome,
  type ToolChallenge,
  type ToolParameters,
  type ToolResult,
  type ToolResumeHandler,
  type ToolResumption,
} from './tools';
import { PROTOCOL_VERSION, SDK_NAME, SDK_VERSION } from './version';

/** Request headers as any framework hands them over; names in any case. */
export type RawHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** A raw HTTP request, for mounting the connector into Koa, Express or a serverless function. */
export interface RawConnectorRequest {
  method: string;
  /** Request path; a query string is ignored. */
  path: string;
  headers: RawHeaders;
  /** The unmodified body: the signature covers these exact bytes. */
  rawBody: Buffer | Uint8Array | string;
}

interface RegisteredTool {
  name: string;
  descriptor: ToolDescriptor;
  /** The tool's input_schema, compiled once at registration. */
  validate: InputValidator;
  handler: ToolHandler;
  resume: ToolResumeHandler | undefined;
}

const EMPTY_PARAMETERS: ToolParameters = Object.freeze({});
const ADVERTISED_LISTS = ['flows', 'events', 'webhooks', 'schedules', 'marketing'] as const;
const ERROR_CODES: ReadonlySet<string> = new Set(CONNECTOR_ERROR_CODES);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A ConnectorError, also when thrown by another copy of this SDK (instanceof would miss it). */
function asConnectorError(value: unknown): ConnectorError | undefined {
  if (value instanceof ConnectorError) return value;
  if (value instanceof Error && value.name === 'ConnectorError') {
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string' && ERROR_CODES.has(code)) return value as ConnectorError;
  }
  return undefined;
}

function readHeader(headers: RawHeaders, name: string, lowercased: boolean): string | undefined {
  let value = headers[name];
  if (value === undefined && !lowercased) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  return typeof value === 'string' ? value : value?.[0];
}

function withoutQuery(path: string): string {
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

function toBuffer(body: Buffer | Uint8Array | string): Buffer {
  if (Buffer.isBuffer(body)) return body;
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** A connector server's protocol logic; create one with `createConnector`. */
export class Connector {
  private readonly config: ConnectorConfig;
  private readonly tools = new Map<string, RegisteredTool>();
  private readonly advertised: Record<(typeof ADVERTISED_LISTS)[number], AdvertisedEntry[]> & { organization?: OrganizationMetadata } = {
    flows: [],
    events: [],
    webhooks: [],
    schedules: [],
    marketing: [],
  };
  private readonly resumeTokens: ResumeTokenSealer;
  private readonly usedResumeTokens: InProcessResumeTokenLedger;
  private readonly pong: ConnectorHttpResponse;
  private readonly tooLarge: ConnectorHttpResponse;
  // Lists are serialized once and rebuilt only after a registration changes them.
  private toolsList: ConnectorHttpResponse | undefined;
  private capabilitiesList: ConnectorHttpResponse | undefined;

  constructor(options: ConnectorOptions = {}) {
    this.config = resolveConnectorConfig(options);
    this.resumeTokens = new ResumeTokenSealer(this.config.signingSecrets, this.config.resumeTokenTtlSeconds * 1000, this.config.now);
    this.usedResumeTokens = new InProcessResumeTokenLedger(this.config.now);
    this.pong = Object.freeze(jsonResponse(200, { type: 'pong', protocol_version: PROTOCOL_VERSION, sdk_version: SDK_VERSION }));
    this.tooLarge = payloadTooLarge(this.config.maxBodyBytes);
  }

  /** The endpoint path this connector answers on (default `/svc`). */
  get endpointPath(): string {
    return this.config.endpointPath;
  }

  /** Registers a tool (spec 2.4); throws ConnectorConfigurationError on a duplicate name or an unsupported schema. */
  tool<P extends ToolParameters = ToolParameters>(name: string, definition: ToolDefinition<P>): this {
    if (typeof name !== 'string' || name === '') throw new ConnectorConfigurationError('A tool needs a non-empty name');
    if (this.tools.has(name)) throw new ConnectorConfigurationError(`Tool '${name}' is already registered`);
    if (typeof definition.handler !== 'function') throw new ConnectorConfigurationError(`Tool '${name}' needs a handler`);
    if (definition.resume !== undefined && typeof definition.resume !== 'function') {
      throw new ConnectorConfigurationError(`Tool '${name}': resume must be a function`);
    }
    const schema: InputSchema = definition.input_schema ?? { type: 'object', properties: {} };
    const compiled = compileInputSchema(schema);
    if (!compiled.valid) throw new ConnectorConfigurationError(`Tool '${name}': ${compiled.problem}`);
    if (schema.type !== 'object') throw new ConnectorConfigurationError(`Tool '${name}': input_schema.type must be 'object'`);
    this.tools.set(name, {
      name,
      descriptor: {
        name,
        description: definition.description,
        auth: definition.auth ?? 'none',
        chat: definition.chat ?? true,
        input_schema: schema,
      },
      validate: compiled.validate,
      // The handler's parameter type P is the author's promise about `parameters`, which
      // the connector keeps by validating them against the same tool's input_schema.
      handler: definition.handler as ToolHandler,
      resume: definition.resume as ToolResumeHandler | undefined,
    });
    this.toolsList = undefined;
    this.capabilitiesList = undefined;
    return this;
  }

  /**
   * Adds flows, events, webhooks, schedules, marketing entries and organization metadata to
   * `capabilities.list` (spec 2.5). They are only advertised: the platform runs them.
   */
  advertise(capabilities: AdvertisedCapabilities): this {
    for (const list of ADVERTISED_LISTS) {
      const entries = capabilities[list];
      if (entries === undefined) continue;
      if (!Array.isArray(entries) || !entries.every(isPlainObject)) {
        throw new ConnectorConfigurationError(`advertise: ${list} must be an array of objects`);
      }
      this.advertised[list] = [...this.advertised[list], ...(entries as AdvertisedEntry[])];
    }
    if (capabilities.organization !== undefined) {
      this.advertised.organization = checkOrganization({ ...this.advertised.organization, ...capabilities.organization });
    }
    this.capabilitiesList = undefined;
    return this;
  }

  /** The raw-request entry point: answers one request; never rejects. */
  async handle(request: RawConnectorRequest): Promise<ConnectorHttpResponse> {
    try {
      if (request.method.toUpperCase() !== 'POST' || withoutQuery(request.path) !== this.config.endpointPath) return NOT_FOUND;
      const rawBody = toBuffer(request.rawBody);
      if (rawBody.length > this.config.maxBodyBytes) return this.tooLarge;
      return await this.handleRoutedRequest(request.headers, rawBody, false);
    } catch (error) {
      this.config.onError(error, {});
      return INTERNAL_ERROR;
    }
  }

  /** The listening entry point: serves the endpoint over node:http on `port` (0 picks a free one). */
  listen(port: number, host?: string): Promise<ConnectorServer> {
    return startListener(
      {
        endpointPath: this.config.endpointPath,
        maxBodyBytes: this.config.maxBodyBytes,
        tooLarge: this.tooLarge,
        onError: this.config.onError,
        // Node lowercases header names, so the case-insensitive scan can be skipped.
        respond: (headers, rawBody) => this.handleRoutedRequest(headers, rawBody, true),
      },
      port,
      host,
    );
  }

  /**
   * Steps 3 to 6 of the pipeline, for a request already routed and size-checked. Answers
   * that need no handler (ping, lists, refusals) come back synchronously: the hot path of a
   * health check allocates no promise.
   */
  private handleRoutedRequest(headers: RawHeaders, rawBody: Buffer, lowercased: boolean): ConnectorHttpResponse | Promise<ConnectorHttpResponse> {
    const check = verifySignature({
      secrets: this.config.signingSecrets,
      signature: readHeader(headers, SIGNATURE_HEADER, lowercased),
      timestamp: readHeader(headers, TIMESTAMP_HEADER, lowercased),
      rawBody,
      nowSeconds: Math.floor(this.config.now() / 1000),
      maxSkewSeconds: this.config.maxTimestampSkewSeconds,
    });
    if (!check.valid) return SIGNATURE_REFUSED[check.refusal];
    const protocol = readHeader(headers, PROTOCOL_HEADER, lowercased);
    if (protocol !== undefined && protocol.trim() !== this.config.protocolVersion) return PROTOCOL_HEADER_MISMATCH;
    let body: unknown;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return BROKEN_JSON;
    }
    return this.dispatch(body, readHeader(headers, TRACE_ID_HEADER, lowercased));
  }

  private dispatch(body: unknown, traceId: string | undefined): ConnectorHttpResponse | Promise<ConnectorHttpResponse> {
    if (!isPlainObject(body)) return errorResponse('invalid_request', 'Request body must be a JSON object');
    const version = body.protocol_version;
    if (version === undefined || version === null) return errorResponse('invalid_request', 'protocol_version is required');
    if (version !== this.config.protocolVersion) {
      return errorResponse('protocol_mismatch', `Unsupported protocol_version ${JSON.stringify(version)}; this connector speaks '${this.config.protocolVersion}'`);
    }
    // `is` checks without allocating; the codec has no transformations, so a body that
    // passes is exactly what `decode` would return. Decode only to explain a failure.
    if (!ProtocolRequest.is(body)) return errorResponse('invalid_request', describeDecodeFailure(ProtocolRequest.decode(body)));
    const request = body;
    switch (request.type) {
      case 'ping':
        return this.pong;
      case 'tools.list':
        return (this.toolsList ??= Object.freeze(
          jsonResponse(200, { type: 'tools.list', tools: this.descriptors(), protocol_version: PROTOCOL_VERSION, sdk_version: SDK_VERSION }),
        ));
      case 'capabilities.list':
        return (this.capabilitiesList ??= Object.freeze(jsonResponse(200, this.capabilities())));
      case 'tool.invoke':
        return this.invoke(request, traceId ?? request.request_id);
      case 'tool.resume':
        return this.resume(request, traceId ?? request.request_id);
    }
  }

  private descriptors(): ToolDescriptor[] {
    return [...this.tools.values()].map((tool) => tool.descriptor);
  }

  private capabilities(): CapabilitiesListResponse {
    const { organization, ...lists } = this.advertised;
    return {
      type: 'capabilities.list',
      tools: this.descriptors(),
      ...lists,
      ...(organization === undefined ? {} : { organization }),
      protocol_version: PROTOCOL_VERSION,
      sdk_version: SDK_VERSION,
      sdk_name: SDK_NAME,
    };
  }

  private async invoke(request: ProtocolRequest, traceId: string): Promise<ConnectorHttpResponse> {
    const name = request.tool;
    if (name === undefined || name === null || name === '') return errorResponse('invalid_request', 'tool is required for tool.invoke');
    const tool = this.tools.get(name);
    if (tool === undefined) return errorResponse('not_found', `Unknown tool '${name}'`);
    const parameters = request.parameters ?? EMPTY_PARAMETERS;
    const problem = tool.validate(parameters, 'parameters');
    if (problem !== undefined) return errorResponse('invalid_request', problem);
    const context = new RequestToolContext(request, parameters, traceId, this.config.installationStorage);
    return this.run(tool, request, context, undefined);
  }

  private async resume(request: ProtocolRequest, traceId: string): Promise<ConnectorHttpResponse> {
    const name = request.tool;
    if (name === undefined || name === null || name === '') return errorResponse('invalid_request', 'tool is required for tool.resume');
    const token = request.resume_token;
    if (token === undefined || token === null || token === '') return errorResponse('invalid_request', 'resume_token is required for tool.resume');
    const answer = request.challenge_response;
    if (answer === undefined || answer === null) return errorResponse('invalid_request', 'challenge_response is required for tool.resume');
    const tool = this.tools.get(name);
    if (tool === undefined) return errorResponse('not_found', `Unknown tool '${name}'`);
    const opened = this.resumeTokens.open(token);
    if (opened.status === 'expired') return errorResponse('not_found', 'Resume token expired; start the tool call again');
    // A token minted for another tool or organization is, for this request, unknown.
    if (
      opened.status === 'unknown' ||
      tool.resume === undefined ||
      opened.payload.tool !== name ||
      (opened.payload.org !== undefined && opened.payload.org !== (request.organization_id ?? undefined))
    ) {
      return errorResponse('not_found', 'Unknown resume token');
    }
    const { id, exp } = opened.payload;
    // Marked before the handler runs, so two concurrent resumes cannot both proceed.
    if (!this.usedResumeTokens.markUsedNow(id, exp)) return errorResponse('not_found', 'Resume token already used');
    const ledger = this.config.resumeTokenLedger;
    if (ledger !== undefined && !(await ledger.markUsed(id, new Date(exp)))) {
      return errorResponse('not_found', 'Resume token already used');
    }
    const context = new RequestToolContext(request, request.parameters ?? EMPTY_PARAMETERS, traceId, this.config.installationStorage);
    return this.run(tool, request, context, { state: opened.payload.state, challenge_response: answer });
  }

  private async run(
    tool: RegisteredTool,
    request: ProtocolRequest,
    context: RequestToolContext,
    resumption: ToolResumption | undefined,
  ): Promise<ConnectorHttpResponse> {
    try {
      const outcome =
        resumption === undefined ? await tool.handler(context) : await (tool.resume as ToolResumeHandler)(context, resumption);
      return this.outcomeResponse(tool, request, outcome);
    } catch (error) {
      const protocolFailure = asConnectorError(error);
      if (protocolFailure !== undefined) return errorResponse(protocolFailure.code, protocolFailure.message);
      this.config.onError(error, { request_id: request.request_id, tool: tool.name });
      return INTERNAL_ERROR;
    }
  }

  /** Turns what a handler returned into an answer; a malformed outcome is a programming error (500). */
  private outcomeResponse(tool: RegisteredTool, request: ProtocolRequest, outcome: ToolOutcome): ConnectorHttpResponse {
    const protocolFailure = asConnectorError(outcome);
    if (protocolFailure !== undefined) return errorResponse(protocolFailure.code, protocolFailure.message);
    if (!isPlainObject(outcome)) throw new Error(`Tool '${tool.name}' returned neither a result, a challenge nor a ConnectorError`);
    const answer = outcome as ToolResult | ToolChallenge;
    if (isToolChallenge(answer)) {
      if (tool.resume === undefined) throw new Error(`Tool '${tool.name}' returned a challenge but registered no resume handler`);
      if (!isPlainObject(answer.challenge)) throw new Error(`Tool '${tool.name}' returned a challenge that is not an object`);
      const { token } = this.resumeTokens.seal(tool.name, answer.state, request.organization_id ?? undefined);
      return jsonResponse(200, { type: 'challenge', resume_token: token, challenge: answer.challenge });
    }
    if (!isPlainObject(answer.output)) throw new Error(`Tool '${tool.name}' returned a result without an output object`);
    const result: ResultResponse = { type: 'result', output: answer.output };
    if (answer.authentication_context !== undefined) result.authentication_context = answer.authentication_context;
    if (answer.person_mutations !== undefined) result.person_mutations = answer.person_mutations;
    return jsonResponse(200, result);
  }
}

function checkOrganization(organization: unknown): OrganizationMetadata {
  const decoded = OrganizationMetadata.decode(organization);
  if (decoded._tag === 'Left') {
    throw new ConnectorConfigurationError(`advertise: organization.${firstErrorPath(decoded.left)} is invalid`);
  }
  const metadata = decoded.right;
  // Spec 2.5: organization event ids are opaque and carry no `app.` prefix.
  const prefixed = metadata.events?.find((event) => event.id.startsWith('app.'));
  if (prefixed !== undefined) {
    throw new ConnectorConfigurationError(`advertise: organization event id '${prefixed.id}' must not start with 'app.'`);
  }
  return metadata;
}

function describeDecodeFailure(decoded: t.Validation<unknown>): string {
  if (decoded._tag === 'Right') return 'Request body is invalid';
  const errors = decoded.left;
  const path = firstErrorPath(errors);
  if (path === 'type') return "type must be one of ping, tools.list, capabilities.list, tool.invoke, tool.resume";
  return errors[0]?.value === undefined ? `${path} is required` : `${path} has an invalid value`;
}

/** Creates a connector (spec 2.6); throws ConnectorConfigurationError when no signing secret is given or set in SVC_SIGNING_SECRET. */
export function createConnector(options: ConnectorOptions = {}): Connector {
  return new Connector(options);
}
