// Meta's webhook payload for WhatsApp (Cloud API), decoded with io-ts into what the webhook use
// case takes (application/whatsapp/whatsapp-webhook.ts). The shape, as Meta documents it:
//
//   {"object": "whatsapp_business_account",
//    "entry": [{"id": "<WABA id>", "changes": [{"field": "messages", "value": {
//       "messaging_product": "whatsapp",
//       "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
//       "contacts": [{"profile": {"name": "Sheena Nelson"}, "wa_id": "16505551234"}],
//       "messages": [{"from": "16505551234", "id": "wamid.HBgL...", "timestamp": "1749416383", "type": "text", "text": {"body": "Does it come in another color?"}},
//                    {"from": "16505551234", "id": "wamid.HBgM...", "timestamp": "1749416390", "type": "audio", "audio": {"id": "1003383421387256", "mime_type": "audio/ogg; codecs=opus", "voice": true}},
//                    {"from": "16505551234", "id": "wamid.HBgN...", "timestamp": "1749416395", "type": "document", "document": {"id": "1003383421387258", "filename": "invoice-4411.pdf", "caption": "Is this right?", "mime_type": "application/pdf"}}],
//       "statuses": [{"id": "wamid.HBgL...", "status": "delivered", "timestamp": "1750263773", "recipient_id": "16505551234", "errors": [{"code": 131047, "title": "..."}]}]
//    }}]}]}
//
// Only changes of field `messages` are decoded further (a malformed one is 400 naming the
// field, e.g. `entry.0.changes.0.value.messages.0.from`); changes of other fields (account
// updates, template reviews) are counted and left alone, whatever their shape. Fields Meta adds
// later are ignored.

import * as t from 'io-ts';
import type { InboundMessage, NumberChange, StatusCallback, WhatsAppDelivery } from '../../../application/whatsapp/whatsapp-webhook';
import { DomainError, invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';

const WaId = t.refinement(t.string, (value) => /^[0-9]{1,32}$/.test(value), 'a WhatsApp id (1 to 32 digits)');
const UnixSeconds = t.refinement(t.string, (value) => /^[0-9]{1,12}$/.test(value), 'Unix seconds (digits)');
const MessageId = t.refinement(t.string, (value) => /^[\x21-\x7e]{1,256}$/.test(value), "Meta's message id (1 to 256 printable characters)");

export const MetaEnvelope = t.type(
  {
    object: t.literal('whatsapp_business_account'),
    entry: t.array(t.type({ changes: t.array(t.type({ field: t.string, value: t.unknown })) })),
  },
  'a WhatsApp Business Account webhook payload',
);

const MetaMessage = t.intersection([
  t.type({ from: WaId, id: MessageId, timestamp: UnixSeconds, type: t.string }),
  t.partial({ text: t.type({ body: t.string }), audio: t.type({ id: t.string }), document: t.intersection([t.type({ id: t.string }), t.partial({ filename: t.string, caption: t.string })]) }),
]);
const MetaContact = t.intersection([t.type({ wa_id: t.string }), t.partial({ profile: t.partial({ name: t.string }) })]);
const MetaStatus = t.intersection([
  t.type({ id: MessageId, status: t.string, timestamp: UnixSeconds }),
  t.partial({ recipient_id: t.string, errors: t.array(t.intersection([t.type({ code: t.number }), t.partial({ title: t.string, message: t.string })])) }),
]);

export const MetaMessagesValue = t.intersection([
  t.type({ messaging_product: t.literal('whatsapp'), metadata: t.type({ phone_number_id: WaId }) }),
  t.partial({ contacts: t.array(MetaContact), messages: t.array(MetaMessage), statuses: t.array(MetaStatus) }),
]);

/** Decodes `value` at `path`, the 400 naming the field from the top of the payload. */
function decodeAt<A>(codec: t.Decoder<unknown, A>, value: unknown, path: string): A {
  try {
    return decodeBody(codec, value);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.field === undefined) throw invalid(error.code, `${path}: expected the value of a messages change`, path);
    throw invalid(error.code, `${path}.${error.message}`, `${path}.${error.field}`);
  }
}

/** The delivery in the raw body; 400 `invalid_request` for a body that is not JSON or not Meta's format. */
export function decodeDelivery(rawBody: Buffer): WhatsAppDelivery {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw invalid('invalid_request', 'the body is not JSON: expected a WhatsApp Business Account webhook payload');
  }
  const envelope = decodeBody(MetaEnvelope, json);
  const delivery: WhatsAppDelivery = { changes: [], other_changes: 0 };
  envelope.entry.forEach((entry, entryIndex) => {
    entry.changes.forEach((change, changeIndex) => {
      if (change.field !== 'messages') {
        delivery.other_changes += 1;
        return;
      }
      const path = `entry.${entryIndex}.changes.${changeIndex}.value`;
      const value = decodeAt(MetaMessagesValue, change.value, path);
      const names = new Map((value.contacts ?? []).map((contact) => [contact.wa_id, contact.profile?.name ?? null]));
      const messages: InboundMessage[] = (value.messages ?? []).map((message, index) => {
        if (message.type === 'text' && message.text === undefined) throw invalid('invalid_request', `${path}.messages.${index}.text: a text message has a text {body}`, `${path}.messages.${index}.text`);
        if (message.type === 'audio' && message.audio === undefined) throw invalid('invalid_request', `${path}.messages.${index}.audio: an audio message has an audio {id}`, `${path}.messages.${index}.audio`);
        if (message.type === 'document' && message.document === undefined) throw invalid('invalid_request', `${path}.messages.${index}.document: a document message has a document {id}`, `${path}.messages.${index}.document`);
        const document = message.type === 'document' ? message.document! : null;
        return {
          wamid: message.id,
          from: message.from,
          timestamp: message.timestamp,
          type: message.type,
          text: message.type === 'text' ? message.text!.body : null,
          media_id: message.type === 'audio' ? message.audio!.id : (document?.id ?? null),
          caption: document?.caption ?? null,
          filename: document?.filename ?? null,
          profile_name: names.get(message.from) ?? null,
        };
      });
      const statuses: StatusCallback[] = (value.statuses ?? []).map((status) => {
        const first = status.errors?.[0];
        return { wamid: status.id, status: status.status, timestamp: status.timestamp, error: first ? { code: first.code, title: (first.title ?? first.message ?? '').slice(0, 500) } : null };
      });
      const numberChange: NumberChange = { phone_number_id: value.metadata.phone_number_id, messages, statuses };
      delivery.changes.push(numberChange);
    });
  });
  return delivery;
}
