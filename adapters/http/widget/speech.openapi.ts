// OpenAPI description of the speech routes (widget/speech.ts); docs/widget.md, "Speech".

import { SUPPORTED_AUDIO_TYPES } from '../../../application/speech/audio-types';
import { MAX_SPEECH_TEXT_LENGTH } from '../../../application/speech/speech';
import { type ApiArea, object, ref, schemaOfCodec, string } from '../openapi/describe';
import { VISITOR_HEADERS } from './widget.openapi';
import { AUDIO_FIELD, TtsBody } from './speech';

const NOT_CONFIGURED = { '503': { description: '`configuration_error`: the platform has no speech server (its operator sets SPEECH_BASE_URL); the message says so', json: ref('Error') } };
const CALLERS =
  'A member’s user token, or a widget token with X-Widget-Visitor when the organization turned the widget’s voice on (403 `widget_feature_disabled` otherwise; 403 `origin_not_allowed` for a page on an origin it does not allow). 429 `rate_limited` past SPEECH_REQUESTS_PER_MINUTE per member or visitor; 502 `speech_unavailable` when the speech server fails.';
const VISITOR = VISITOR_HEADERS.map((header) => ({ ...header, required: false, description: `with a widget token: ${header.description}` }));

export const widgetSpeechApi: ApiArea = {
  tag: 'widget',
  schemas: {
    Transcript: object({ text: string('what was said') }),
  },
  routes: {
    '/api/v1/widget/stt': {
      post: {
        summary: 'Speech to text',
        description: `The text spoken in a recording sent as the multipart file \`${AUDIO_FIELD}\`. The audio is told by its bytes: ${SUPPORTED_AUDIO_TYPES.join(', ')} (415 \`unsupported_audio_type\` otherwise); 413 \`audio_too_large\` past SPEECH_MAX_AUDIO_BYTES; 400 naming \`${AUDIO_FIELD}\` without it. ${CALLERS}`,
        access: 'user_or_widget_token',
        headers: VISITOR,
        body: { multipart: { type: 'object', properties: { [AUDIO_FIELD]: { type: 'string', format: 'binary', description: 'the recording' } }, required: [AUDIO_FIELD] } },
        success: { status: 200, description: 'the transcript', json: ref('Transcript') },
        errors: [400, 413, 415, 429, 502],
        otherAnswers: NOT_CONFIGURED,
      },
    },
    '/api/v1/widget/tts': {
      post: {
        summary: 'Text to speech',
        description: `\`text\` (1 to ${MAX_SPEECH_TEXT_LENGTH} characters) read aloud as MP3, in \`voice\` (a voice of the speech server; SPEECH_TTS_VOICE when omitted): 400 naming \`text\` or \`voice\`. ${CALLERS}`,
        access: 'user_or_widget_token',
        headers: VISITOR,
        body: { json: schemaOfCodec(TtsBody) },
        success: { status: 200, description: 'the audio', content: { type: 'audio/mpeg', schema: { type: 'string', format: 'binary' } } },
        errors: [429, 502],
        otherAnswers: NOT_CONFIGURED,
      },
    },
  },
};
