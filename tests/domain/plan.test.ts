import { planDecider, type PlanTerms } from '../../domain/plan/plan';
import { quotaOverrideDecider } from '../../domain/quota-override/quota-override';
import { paymentDecider } from '../../domain/payment/payment';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const at = FIXED_NOW.toISOString();
const terms: PlanTerms = {
  name: 'Team',
  description: '',
  prices: [
    { interval: 'month', amount: 4900, currency: 'usd' },
    { interval: 'year', amount: 49000, currency: 'usd' },
  ],
  limits: { messages_per_month: 1000, documents: 50, users: 5, business_tools: null },
  features: { sdk_connections: false, whatsapp: true, handoff: true, crm: false },
};
const created = { type: 'PlanCreated', data: { plan_id: 'p1', code: 'team', ...terms, created_at: at } } as const;
const retired = { type: 'PlanRetired', data: { plan_id: 'p1', retired_at: at } } as const;
const create = (overrides: Partial<PlanTerms> & { code?: string } = {}) => ({ type: 'CreatePlan', data: { plan_id: 'p1', code: 'team', ...terms, ...overrides } }) as const;

describe('plan decider', () => {
  const spec = deciderSpec(planDecider);

  it('creates a plan with its terms, keeping only the known limits and features', () => {
    const stray = { ...terms, limits: { ...terms.limits, seats: 3 } as PlanTerms['limits'], features: { ...terms.features, beta: true } as PlanTerms['features'] };
    spec.given([]).when({ type: 'CreatePlan', data: { plan_id: 'p1', code: 'team', ...stray } }).then([created]);
    spec.given([created]).when(create()).thenThrows('conflict', 'plan_exists');
  });

  it('refuses a bad code, name, price, currency or limit, naming the field', () => {
    spec.given([]).when(create({ code: 'Team Plan' })).thenThrows('invalid', 'invalid_plan', 'code');
    spec.given([]).when(create({ name: '  ' })).thenThrows('invalid', 'invalid_plan', 'name');
    spec.given([]).when(create({ prices: [] })).thenThrows('invalid', 'invalid_plan', 'prices');
    spec.given([]).when(create({ prices: [{ interval: 'month', amount: 10.5, currency: 'usd' }] })).thenThrows('invalid', 'invalid_plan', 'prices[0].amount');
    spec.given([]).when(create({ prices: [{ interval: 'month', amount: -1, currency: 'usd' }] })).thenThrows('invalid', 'invalid_plan', 'prices[0].amount');
    spec.given([]).when(create({ prices: [{ interval: 'month', amount: 100, currency: 'USD' }] })).thenThrows('invalid', 'invalid_plan', 'prices[0].currency');
    spec
      .given([])
      .when(create({ prices: [{ interval: 'month', amount: 100, currency: 'usd' }, { interval: 'month', amount: 200, currency: 'usd' }] }))
      .thenThrows('invalid', 'invalid_plan', 'prices[1].interval');
    spec
      .given([])
      .when(create({ prices: [{ interval: 'month', amount: 100, currency: 'usd' }, { interval: 'year', amount: 200, currency: 'eur' }] }))
      .thenThrows('invalid', 'invalid_plan', 'prices');
    spec.given([]).when(create({ limits: { ...terms.limits, users: -2 } })).thenThrows('invalid', 'invalid_plan', 'limits.users');
  });

  it('changes terms only when they differ', () => {
    const changed = { ...terms, name: 'Team plus' };
    spec.given([created]).when({ type: 'ChangePlanTerms', data: changed }).then([{ type: 'PlanTermsChanged', data: { plan_id: 'p1', ...changed, changed_at: at } }]);
    spec.given([created]).when({ type: 'ChangePlanTerms', data: terms }).thenNothingHappened();
    spec.given([]).when({ type: 'ChangePlanTerms', data: terms }).thenThrows('not_found', 'plan_not_found');
  });

  it('retires a plan with subscribers instead of deleting it, and deletes one without', () => {
    spec.given([created]).when({ type: 'DeletePlan', data: { subscribers: 2 } }).then([retired]);
    spec.given([created, retired]).when({ type: 'DeletePlan', data: { subscribers: 2 } }).thenNothingHappened();
    spec.given([created, retired]).when({ type: 'DeletePlan', data: { subscribers: 0 } }).then([{ type: 'PlanDeleted', data: { plan_id: 'p1', code: 'team', deleted_at: at } }]);
    const deleted = { type: 'PlanDeleted', data: { plan_id: 'p1', code: 'team', deleted_at: at } } as const;
    spec.given([created, deleted]).when({ type: 'RetirePlan', data: {} }).thenThrows('not_found', 'plan_not_found');
  });

  it('retires and sells a plan again, each once', () => {
    spec.given([created]).when({ type: 'RetirePlan', data: {} }).then([retired]);
    spec.given([created, retired]).when({ type: 'RetirePlan', data: {} }).thenNothingHappened();
    spec.given([created, retired]).when({ type: 'ReinstatePlan', data: {} }).then([{ type: 'PlanReinstated', data: { plan_id: 'p1', reinstated_at: at } }]);
    spec.given([created]).when({ type: 'ReinstatePlan', data: {} }).thenNothingHappened();
  });
});

describe('quota override decider', () => {
  const spec = deciderSpec(quotaOverrideDecider);
  const set = (overrides: Record<string, unknown>, reason = 'pilot') => ({ type: 'SetQuotaOverrides', data: { tenant_id: 't1', overrides, reason } }) as const;
  const first = { type: 'QuotaOverridesSet', data: { tenant_id: 't1', overrides: { users: 10, documents: null }, previous: {}, reason: 'pilot', set_at: at } } as const;

  it('replaces the overrides, keeping the previous ones in the event', () => {
    spec.given([]).when(set({ users: 10, documents: null })).then([first]);
    spec.given([first]).when(set({})).then([{ type: 'QuotaOverridesSet', data: { tenant_id: 't1', overrides: {}, previous: { users: 10, documents: null }, reason: 'pilot', set_at: at } }]);
  });

  it('records nothing when the overrides are the same, and ignores unknown quotas', () => {
    spec.given([first]).when(set({ documents: null, users: 10, seats: 4 })).thenNothingHappened();
  });

  it('refuses a negative or fractional limit, naming it', () => {
    spec.given([]).when(set({ users: -1 })).thenThrows('invalid', 'invalid_quota', 'overrides.users');
    spec.given([]).when(set({ messages_per_month: 1.5 })).thenThrows('invalid', 'invalid_quota', 'overrides.messages_per_month');
  });
});

describe('payment decider', () => {
  const spec = deciderSpec(paymentDecider);
  const facts = { payment_id: 'pay1', tenant_id: 't1', checkout_id: 'c1', plan_id: 'starter', interval: 'month' as const, amount: 2900, currency: 'usd', provider: 'sandbox' };
  const succeeded = { type: 'PaymentSucceeded', data: { ...facts, provider_payment_id: 'pi_1', paid_at: at } } as const;

  it('records a payment once: the same report again changes nothing', () => {
    spec.given([]).when({ type: 'RecordPaymentSucceeded', data: succeeded.data }).then([succeeded]);
    spec.given([succeeded]).when({ type: 'RecordPaymentSucceeded', data: succeeded.data }).thenNothingHappened();
  });

  it('refuses a report that contradicts the recorded one', () => {
    spec
      .given([succeeded])
      .when({ type: 'RecordPaymentFailed', data: { ...facts, failure_code: 'card_declined', failure_message: 'declined', failed_at: at } })
      .thenThrows('conflict', 'payment_recorded');
  });
});
