// What this SDK reports about itself, on every response (spec 4.1 rule 8, section 9).

/** The only connector protocol version this SDK speaks (spec section 9). */
export const PROTOCOL_VERSION = '1';

/** Name reported as `sdk_name` and in the `x-svc-sdk` response header. */
export const SDK_NAME = 'svc-platform-connector-sdk';

/** Version reported as `sdk_version` and in the `x-svc-version` response header. */
export const SDK_VERSION = '1.0.0';
