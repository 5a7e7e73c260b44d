// Speech (spec 4.4): `POST /api/v1/widget/stt` turns recorded audio (multipart `file`) into
// `{text}`, and `POST /api/v1/widget/tts` turns `{text, voice?}` into audio bytes. Either a
// member's user token (the console) or a widget token with the visitor header (the widget,
// when the tenant turned its voice on). Without a speech server configured both are 503
// `configuration_error`, before any upload is read. The rules are application/speech.

import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import { type SpeechCaller, type SpeechDependencies, requireSpeech, synthesizeSpeech, transcribeSpeech } from '../../../application/speech/speech';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { WIDGET_TOKEN_PREFIX } from '../../../application/tenant/widget-token';
import { requireWidgetFeature } from '../../../application/widget/visitor-conversations';
import { invalid } from '../../../domain/shared/errors';
import { multipartBody, uploadOf } from '../bodies/multipart';
import { decodeBody } from '../decode';
import { HttpError } from '../errors';
import { principalOf } from '../middleware/authenticate';
import { bearerToken } from '../request-context';
import { jsonBodyInRoute } from '../bodies/json';
import { type WidgetRoutesOptions, type WidgetState, authenticateWidgetRequest, requestVisitor } from './widget-auth';

export const TtsBody = t.type({ text: t.string, voice: t.union([t.string, t.null, t.undefined]) }, 'TtsBody');

/** The field the audio comes in. */
export const AUDIO_FIELD = 'file';

interface SpeechState extends WidgetState {
  speechCaller: SpeechCaller;
}

export function speechRouter(identity: UseCaseDependencies, deps: SpeechDependencies, options: WidgetRoutesOptions): Router<SpeechState> {
  const router = new Router<SpeechState>({ prefix: '/api/v1/widget' });
  const widget = authenticateWidgetRequest(identity, options);

  /** A widget token (`wt_...`) speaks for a visitor of a widget with voice on; any other bearer must be a member's user token. */
  const caller: Middleware<SpeechState> = async (ctx, next) => {
    const token = bearerToken(ctx);
    if (token !== null && token.startsWith(WIDGET_TOKEN_PREFIX)) {
      await widget(ctx, async () => {
        const visitor = requestVisitor(identity, ctx);
        requireWidgetFeature(ctx.state.widget, 'voice');
        ctx.state.speechCaller = { kind: 'visitor', tenant_id: ctx.state.widget.tenant_id, visitor_id: visitor.party.id };
      });
    } else {
      const principal = await principalOf(identity, ctx);
      ctx.state.speechCaller = { kind: 'user', tenant_id: principal.tenant_id, user_id: principal.user_id };
    }
    // 503 before the body is read: nothing can be done with it.
    requireSpeech(deps);
    await next();
  };

  /** The multipart limits' 413s, in the speech route's own words. */
  const tooLargeAsAudio: Middleware = async (_ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof HttpError && error.status === 413 && (error.code === 'file_too_large' || error.code === 'payload_too_large')) {
        throw new HttpError(413, 'audio_too_large', `the audio may be at most ${deps.speechSettings.maxAudioBytes} bytes`);
      }
      throw error;
    }
  };

  router.post('/stt', caller, tooLargeAsAudio, multipartBody({ maxFileBytes: deps.speechSettings.maxAudioBytes, maxFiles: 1, maxFields: 5 }), async (ctx) => {
    const file = uploadOf(ctx).files[0];
    if (!file || file.field !== AUDIO_FIELD) throw invalid('invalid_request', `${AUDIO_FIELD}: send the recording as a file in the "${AUDIO_FIELD}" field`, AUDIO_FIELD);
    ctx.body = await transcribeSpeech(deps, ctx.state.speechCaller, await readFile(file.path));
  });

  router.post('/tts', caller, jsonBodyInRoute(options.bodyLimitBytes), async (ctx) => {
    const body = decodeBody(TtsBody, ctx.request.body);
    const audio = await synthesizeSpeech(deps, ctx.state.speechCaller, body);
    ctx.set('cache-control', 'no-store');
    ctx.type = audio.content_type;
    ctx.body = audio.bytes;
  });

  return router;
}
