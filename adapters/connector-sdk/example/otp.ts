// One-time codes for the order-status tool. The code is generated per challenge, sent to
// the phone on the order by an `OtpDelivery`, and only its digest travels in the sealed
// resume token's state, so any replica can check the answer without shared memory.
//
// How the code is obtained in the example: the default delivery is a stub that logs the
// code to the connector's console ("[example-connector] OTP ... : 123456"). Replace it with
// your SMS or e-mail provider; tests inject a delivery that captures the code.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

/** Sends a one-time code to a customer. */
export interface OtpDelivery {
  /** Delivers `code` to `destination` (a phone number here). */
  send(message: { destination: string; code: string; order_id: string }): Promise<void> | void;
}

/** The example's stand-in for an SMS provider: it logs the code. Never use it in production. */
export const loggingOtpDelivery: OtpDelivery = {
  send({ destination, code, order_id }) {
    console.log(`[example-connector] OTP for order ${order_id} to ${maskPhone(destination)}: ${code}`);
  },
};

/** A fresh 6-digit code. */
export function newOtpCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** Digest of a code bound to its order, so a code for one order cannot answer another's challenge. */
export function otpDigest(orderId: string, code: string): string {
  return createHash('sha256').update(`${orderId}:${code.trim()}`).digest('hex');
}

/** Compares an answer with the expected digest in constant time. */
export function otpMatches(orderId: string, answer: string, expectedDigest: string): boolean {
  const actual = Buffer.from(otpDigest(orderId, answer), 'hex');
  const expected = Buffer.from(expectedDigest, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** `+4915100001234` -> `***1234`, for telling the user where the code went. */
export function maskPhone(phone: string): string {
  return `***${phone.slice(-4)}`;
}
