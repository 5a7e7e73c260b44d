// widget.js: the embeddable website widget (docs/widget.md, "Embedding the widget").
//
//   <script src="https://platform.example/widget.js" data-token="<widget token>" async></script>
//
// data-token     the tenant's publishable widget token (required);
// data-api-base  the platform's URL, when widget.js is served from elsewhere (default: where
//                widget.js itself was loaded from);
// data-mode      `launcher` (default: a button in a corner opens the chat) or `page` (the chat
//                fills its container: the public chat page /chat/{slug});
// data-container the id of the element to fill in `page` mode (default: a new one filling the
//                window).
//
// The host page talks to it through window.SvcWidget: identify(), clearIdentity(), open(),
// close(); `svcwidget:ready` is dispatched on window once it is drawn.

import type { Identity } from './protocol';
import { Widget } from './widget';

export interface SvcWidgetApi {
  /** The end user's identity: `user_id` + `user_hash` (verified identity), `token` / `session` (forwarded to the tenant's tools). */
  identify(identity: Identity): void;
  /** Forgets the identity and tells the platform to stop forwarding the end user's token and session. */
  clearIdentity(): Promise<void>;
  open(): void;
  close(): void;
  /** Resolves once the widget is drawn (false: the platform refused it). */
  ready: Promise<boolean>;
}

declare global {
  interface Window {
    SvcWidget?: SvcWidgetApi;
  }
}

/** Properties of the shadow host set inline and !important: a host page's rules, even `* {display:none !important}`, lose to them. */
function protectHost(host: HTMLElement, placement: Record<string, string>): void {
  host.style.setProperty('all', 'initial', 'important');
  const fixed: Record<string, string> = { display: 'block', visibility: 'visible', opacity: '1', contain: 'layout style', 'pointer-events': 'auto', ...placement };
  for (const [name, value] of Object.entries(fixed)) host.style.setProperty(name, value, 'important');
}

function scriptElement(): HTMLScriptElement | null {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement) return current;
  return document.querySelector<HTMLScriptElement>('script[data-token][src*="widget.js"]');
}

/** The platform's base: data-api-base, else the folder widget.js was loaded from. */
function baseOf(script: HTMLScriptElement): string {
  const given = script.getAttribute('data-api-base');
  const url = new URL(given || './', given ? location.href : script.src || location.href);
  return url.href.replace(/\/+$/, '');
}

function boot(): void {
  if (window.SvcWidget) return;
  const script = scriptElement();
  const token = script?.getAttribute('data-token')?.trim();
  if (!script || !token) {
    console.warn('[svc widget] no data-token on the widget.js script tag: nothing is shown');
    return;
  }
  const mode = script.getAttribute('data-mode') === 'page' ? 'page' : 'launcher';
  const host = document.createElement('div');
  host.setAttribute('data-svc-widget', '');
  const widget = new Widget({ token, base: baseOf(script), mode, host });

  let resolveReady: (shown: boolean) => void = () => undefined;
  const api: SvcWidgetApi = {
    identify: (identity) => widget.identify(identity),
    clearIdentity: () => widget.clearIdentity(),
    open: () => widget.open(),
    close: () => widget.close(),
    ready: new Promise((resolve) => (resolveReady = resolve)),
  };
  window.SvcWidget = api;

  const mount = (): void => {
    if (mode === 'page') {
      const container = document.getElementById(script.getAttribute('data-container') ?? '') ?? document.body;
      protectHost(host, container === document.body ? { position: 'fixed', inset: '0', width: '100%', height: '100%' } : { position: 'relative', width: '100%', height: '100%' });
      container.appendChild(host);
    } else {
      protectHost(host, { position: 'fixed', bottom: '20px', right: '20px', left: 'auto', top: 'auto', width: '56px', height: '56px', 'z-index': '2147483000' });
      document.body.appendChild(host);
    }
    void widget.start().then((shown) => {
      if (!shown) host.remove();
      else if (mode === 'launcher') placeLauncher(host);
      resolveReady(shown);
      dispatchEvent(new CustomEvent('svcwidget:ready', { detail: { shown } }));
    });
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
}

/** The corner the settings chose (the view knows it from its root's class). */
function placeLauncher(host: HTMLElement): void {
  const left = Boolean(host.shadowRoot?.querySelector('.svc.is-left'));
  host.style.setProperty(left ? 'left' : 'right', '20px', 'important');
  host.style.setProperty(left ? 'right' : 'left', 'auto', 'important');
}

boot();
