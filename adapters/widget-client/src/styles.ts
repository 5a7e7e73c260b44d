// The widget's own style sheet, applied inside its shadow root only: the host page's rules
// cannot match anything in there, and these cannot leak out. Colours come from custom
// properties set from the settings (--svc-primary, --svc-background, --svc-text) and the
// theme tokens (--svc-<name>); the tenant's custom CSS is applied after this sheet.

export const WIDGET_CSS = `
:host{all:initial;display:block}
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
.svc{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--svc-text);text-align:left;direction:ltr}
button,input,textarea{font:inherit;color:inherit;margin:0}
button{cursor:pointer}
button:disabled{cursor:default;opacity:.55}
:focus-visible{outline:2px solid var(--svc-focus,var(--svc-primary));outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.launcher{display:flex;align-items:center;justify-content:center;width:56px;height:56px;border-radius:50%;border:0;padding:0;background:var(--svc-primary);color:var(--svc-on-primary,#fff);box-shadow:0 4px 14px rgba(0,0,0,.25)}
svg{fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round}
.launcher svg{width:28px;height:28px}
.panel{position:absolute;bottom:72px;right:0;width:min(380px,calc(100vw - 32px));height:min(600px,calc(100vh - 110px));display:flex;flex-direction:column;background:var(--svc-background);border-radius:var(--svc-radius,14px);box-shadow:0 10px 40px rgba(0,0,0,.25);overflow:hidden}
.is-left .panel{right:auto;left:0}
.is-page{height:100%}
.is-page .panel{position:relative;bottom:auto;width:100%;height:100%;border-radius:0;box-shadow:none}
header{display:flex;align-items:center;gap:8px;padding:12px 14px;background:var(--svc-primary);color:var(--svc-on-primary,#fff)}
header img{width:28px;height:28px;border-radius:6px;object-fit:contain;background:#fff}
header h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
header button{background:transparent;border:1px solid rgba(255,255,255,.6);border-radius:8px;padding:4px 8px;font-size:13px;color:inherit}
header .close{border:0;font-size:22px;line-height:1;padding:2px 6px}
.log{flex:1;overflow-y:auto;padding:14px;display:flex;flex-direction:column;gap:10px}
.msg{max-width:85%;padding:8px 12px;border-radius:12px;white-space:pre-wrap;overflow-wrap:anywhere}
.user{align-self:flex-end;background:var(--svc-primary);color:var(--svc-on-primary,#fff);border-bottom-right-radius:4px}
.assistant,.agent{align-self:flex-start;background:var(--svc-bubble,#f1f3f5);border-bottom-left-radius:4px}
.agent{border:1px solid var(--svc-primary)}
.who{display:block;font-size:12px;opacity:.7}
.note{align-self:center;font-size:13px;opacity:.8;text-align:center}
.error{align-self:stretch;background:#fdecec;color:#8a1c1c;border-radius:8px;padding:8px 12px;font-size:14px}
.tool{align-self:flex-start;font-size:13px;font-style:italic;opacity:.85}
.challenge{border-left:3px solid var(--svc-primary)}
.typing::after{content:"\\2026"}
.sources{margin:6px 0 0;padding:6px 0 0 18px;border-top:1px solid rgba(0,0,0,.1);font-size:13px;white-space:normal}
.sources-title{margin:6px 0 0;font-size:12px;font-weight:600;opacity:.75;white-space:normal}
.rate{display:flex;gap:6px;margin-top:6px}
.rate button{display:flex;background:transparent;border:1px solid rgba(0,0,0,.2);border-radius:6px;padding:4px 8px}
.rate svg{width:16px;height:16px}
.rate button[aria-pressed=true]{opacity:1;background:var(--svc-primary);color:var(--svc-on-primary,#fff);border-color:var(--svc-primary)}
.status{min-height:0;padding:0 14px;font-size:12px;opacity:.75}
.status:empty{display:none}
.lead{padding:12px 14px;border-top:1px solid rgba(0,0,0,.1);display:grid;gap:8px;max-height:60%;overflow-y:auto}
.lead h3{margin:0;font-size:15px}
.lead label{display:grid;gap:2px;font-size:13px}
.lead input,.lead textarea,.composer textarea{width:100%;border:1px solid rgba(0,0,0,.25);border-radius:8px;padding:8px 10px;background:#fff;color:#111}
.lead [aria-invalid=true]{border-color:#b3261e}
.lead .problem{color:#b3261e;font-size:12px}
.lead .actions{display:flex;gap:8px;justify-content:flex-end}
.primary{background:var(--svc-primary);color:var(--svc-on-primary,#fff);border:0;border-radius:8px;padding:8px 14px}
.secondary{background:transparent;border:1px solid rgba(0,0,0,.25);border-radius:8px;padding:8px 14px}
.composer{display:flex;gap:8px;padding:10px 12px;border-top:1px solid rgba(0,0,0,.1)}
.composer textarea{flex:1;resize:none;min-height:40px;max-height:120px}
.confirm{padding:12px 14px;border-top:1px solid rgba(0,0,0,.1);display:grid;gap:8px}
.confirm h3{margin:0;font-size:15px}
.confirm p{margin:0;font-size:13px}
.confirm .actions{display:flex;gap:8px;justify-content:flex-end}
.danger{background:#b3261e;color:#fff}
footer{display:flex;justify-content:center;gap:12px;padding:0 12px 10px}
footer button{background:transparent;border:0;text-decoration:underline;font-size:13px;opacity:.85;white-space:nowrap}
`;
