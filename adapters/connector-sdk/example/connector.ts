// An example connector a new organization can copy: a coffee shop exposing
//   - search_products: catalog search over bundled data (no authentication);
//   - order_status: answers only after an OTP challenge sent to the phone on the order;
//   - approve_refund: a manager-only tool (`chat: false`, kept off customer chat);
//   - notify_warehouse: a tool for flows (`chat: false`): the `prepare_order` flow calls it
//     when the platform receives `shop.order.created` (docs/orchestration-events.md, "Flows");
// and advertising flows, events, webhooks, schedules, marketing and organization metadata
// that the platform runs (the connector only advertises them).
//
// In your own project import from the package instead:
//   import { createConnector, ConnectorError } from 'svc-platform/connector-sdk';
import { randomUUID } from 'node:crypto';
import { ConnectorError, createConnector, type Connector, type ConnectorOptions } from '..';
import { PRODUCT_CATEGORIES, findOrder, searchProducts, type Order, type ProductCategory } from './catalog';
import { loggingOtpDelivery, maskPhone, newOtpCode, otpDigest, otpMatches, type OtpDelivery } from './otp';

/** Options of the example connector: the SDK's options plus where OTP codes go. */
export interface ExampleConnectorOptions extends ConnectorOptions {
  /** Delivers order-status OTP codes; default logs them to the console. */
  otpDelivery?: OtpDelivery;
  /** Largest refund, in cents, one manager may approve alone. Default 50 000. */
  refundApprovalLimitCents?: number;
}

interface SearchProductsParameters extends Record<string, unknown> {
  query: string;
  category?: ProductCategory;
  max_results?: number;
  in_stock_only?: boolean;
}

interface OrderStatusParameters extends Record<string, unknown> {
  order_id: string;
}

interface NotifyWarehouseParameters extends Record<string, unknown> {
  order_id: string;
  /** A test aid: fail this many calls for the order (counted per process) before succeeding. */
  fail_first?: number;
}

interface ApproveRefundParameters extends Record<string, unknown> {
  order_id: string;
  amount_cents: number;
  reason?: string;
}

/** What the order-status challenge seals into its resume token. */
interface OrderStatusChallengeState {
  order_id: string;
  code_digest: string;
}

function isOrderStatusChallengeState(state: unknown): state is OrderStatusChallengeState {
  const candidate = state as Partial<OrderStatusChallengeState> | null;
  return typeof candidate?.order_id === 'string' && typeof candidate.code_digest === 'string';
}

function orderStatusOutput(order: Order): Record<string, unknown> {
  return {
    order_id: order.order_id,
    status: order.status,
    carrier: order.carrier ?? null,
    tracking_number: order.tracking_number ?? null,
    estimated_delivery: order.estimated_delivery ?? null,
    items: order.items,
    total_cents: order.total_cents,
  };
}

/** Builds the example connector; `main.ts` listens with it, tests run it in-process. */
export function createExampleConnector(options: ExampleConnectorOptions = {}): Connector {
  const { otpDelivery = loggingOtpDelivery, refundApprovalLimitCents = 50_000, ...connectorOptions } = options;
  const connector = createConnector(connectorOptions);

  connector.tool<SearchProductsParameters>('search_products', {
    description: 'Search the product catalog by keywords; optionally filter by category and stock.',
    auth: 'none',
    chat: true,
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 100, description: 'Keywords, e.g. "decaf beans"' },
        category: { type: 'string', enum: PRODUCT_CATEGORIES },
        max_results: { type: 'integer', minimum: 1, maximum: 20 },
        in_stock_only: { type: 'boolean' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    handler: ({ parameters }) => {
      const matches = searchProducts(parameters.query, { category: parameters.category, inStockOnly: parameters.in_stock_only });
      return { output: { products: matches.slice(0, parameters.max_results ?? 5), total: matches.length } };
    },
  });

  connector.tool<OrderStatusParameters>('order_status', {
    description: 'Status and tracking of an order. The customer confirms with a one-time code sent to the phone on the order.',
    auth: 'optional',
    chat: true,
    input_schema: {
      type: 'object',
      properties: { order_id: { type: 'string', minLength: 3, maxLength: 20, description: 'Order number, e.g. A-1001' } },
      required: ['order_id'],
      additionalProperties: false,
    },
    handler: async ({ parameters, authentication }) => {
      const order = findOrder(parameters.order_id);
      if (order === undefined) throw new ConnectorError('customer_not_found', `No order ${parameters.order_id} was found`);
      // A conversation that already passed the OTP for this order is not asked again: the
      // platform sends back the authentication_context we returned (as `authentication`).
      if (authentication?.method === 'otp' && authentication.order_id === order.order_id) {
        return { output: orderStatusOutput(order) };
      }
      const code = newOtpCode();
      await otpDelivery.send({ destination: order.phone, code, order_id: order.order_id });
      const state: OrderStatusChallengeState = { order_id: order.order_id, code_digest: otpDigest(order.order_id, code) };
      return {
        challenge: {
          kind: 'otp',
          channel: 'sms',
          destination: maskPhone(order.phone),
          length: code.length,
          message: `Enter the ${code.length}-digit code we sent to ${maskPhone(order.phone)}.`,
        },
        state,
      };
    },
    resume: (_context, { state, challenge_response }) => {
      if (!isOrderStatusChallengeState(state)) throw new Error('order_status resumed with a state it did not seal');
      if (!otpMatches(state.order_id, challenge_response, state.code_digest)) {
        throw new ConnectorError('denied', 'The code does not match. Ask for the order status again to get a new code.');
      }
      const order = findOrder(state.order_id);
      if (order === undefined) throw new ConnectorError('customer_not_found', `No order ${state.order_id} was found`);
      return {
        output: orderStatusOutput(order),
        authentication_context: { method: 'otp', order_id: order.order_id },
      };
    },
  });

  connector.tool<ApproveRefundParameters>('approve_refund', {
    description: 'Approve a refund on an order (managers only; never offered in customer chat).',
    auth: 'none',
    chat: false,
    input_schema: {
      type: 'object',
      properties: {
        order_id: { type: 'string', minLength: 3, maxLength: 20 },
        amount_cents: { type: 'integer', minimum: 1 },
        reason: { type: 'string', maxLength: 500 },
      },
      required: ['order_id', 'amount_cents'],
      additionalProperties: false,
    },
    handler: ({ parameters }) => {
      const order = findOrder(parameters.order_id);
      if (order === undefined) throw new ConnectorError('invalid_request', `parameters.order_id: no order ${parameters.order_id}`);
      if (parameters.amount_cents > order.total_cents) {
        throw new ConnectorError('invalid_request', `parameters.amount_cents exceeds the order total of ${order.total_cents}`);
      }
      if (parameters.amount_cents > refundApprovalLimitCents) {
        throw new ConnectorError('denied', `Refunds above ${refundApprovalLimitCents} cents need a second approver`);
      }
      // A real connector records the refund in its own database or payment provider here.
      return { output: { approved: true, refund_id: `RF-${randomUUID()}`, order_id: order.order_id, amount_cents: parameters.amount_cents } };
    },
  });

  // Calls per order, for `fail_first`. A real connector talks to its warehouse here and uses
  // `request_id` to recognise a call the platform repeated after a crash (same id: same call).
  const warehouseCalls = new Map<string, number>();
  connector.tool<NotifyWarehouseParameters>('notify_warehouse', {
    description: 'Ask the warehouse to prepare an order (run by the prepare_order flow; never offered in chat).',
    auth: 'none',
    chat: false,
    input_schema: {
      type: 'object',
      properties: {
        order_id: { type: 'string', minLength: 1, maxLength: 100 },
        fail_first: { type: 'integer', minimum: 0, maximum: 100, description: 'Test aid: fail this many calls for the order first' },
      },
      required: ['order_id'],
      additionalProperties: false,
    },
    handler: ({ parameters, request_id }) => {
      const calls = (warehouseCalls.get(parameters.order_id) ?? 0) + 1;
      warehouseCalls.set(parameters.order_id, calls);
      if (calls <= (parameters.fail_first ?? 0)) throw new ConnectorError('internal_error', `the warehouse is not answering (call ${calls} for ${parameters.order_id})`);
      return { output: { order_id: parameters.order_id, ticket: `WH-${parameters.order_id}`, calls, request_id } };
    },
  });

  connector.advertise({
    flows: [
      {
        id: 'prepare_order',
        label: 'Prepare a new order',
        trigger: ['shop.order.created'],
        steps: [{ tool: 'notify_warehouse', parameters: { order_id: '$.payload.order_id', fail_first: '$.payload.fail_first' } }],
        emits: [{ name: 'shop.order.prepared', payload: { order_id: '$.payload.order_id', ticket: '$.steps.0.output.ticket' } }],
      },
      {
        id: 'order_delay_follow_up',
        label: 'Follow up on a delayed order',
        trigger: { event: 'order_delayed' },
        steps: [{ tool: 'order_status' }, { task: 'review_refund' }],
      },
    ],
    events: [
      { id: 'order_delayed', label: 'Order delayed' },
      { id: 'refund_requested', label: 'Refund requested' },
    ],
    webhooks: [{ id: 'carrier_update', label: 'Carrier tracking update', emits: 'order_delayed' }],
    schedules: [{ id: 'nightly_stock_sync', label: 'Nightly stock sync', cron: '0 2 * * *' }],
    marketing: [{ id: 'back_in_stock', label: 'Back-in-stock notice', channel: 'email' }],
    organization: {
      version: 1,
      events: [
        { id: 'order_delayed', label: 'Order delayed' },
        { id: 'refund_requested', label: 'Refund requested' },
      ],
      actions: [{ id: 'approve_refund', label: 'Approve a refund' }],
      tasks: [{ id: 'review_refund', label: 'Review a refund request', priority: 'high' }],
    },
  });

  return connector;
}
