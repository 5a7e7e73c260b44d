// OpenAPI description of the super admin's payments list (admin/payments.ts).

import { PAYMENT_STATUSES } from '../../../application/payment/payments';
import { PAGE_PARAMETERS, type ApiArea, enumOf, page, ref } from '../openapi/describe';

export const adminPaymentsApi: ApiArea = {
  tag: 'super admin',
  routes: {
    '/api/v1/admin/payments': {
      get: {
        summary: 'Payments of every organization',
        access: 'admin_token',
        query: [
          { name: 'tenant_id', description: 'only this organization’s payments', schema: { type: 'string', minLength: 1 } },
          { name: 'status', description: 'only payments of this status', schema: enumOf(PAYMENT_STATUSES) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'payments, succeeded and failed, newest first', json: page(ref('Payment')) },
      },
    },
  },
};
