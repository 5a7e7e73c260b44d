// Redaction of a tool call's HTTP exchange (issue #12 point 4): what the execution log, the
// events and the caller see of a request sent with credentials. Two rules, both applied:
//
// - By name: the values of headers that carry credentials or the end user's identity
//   (Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-End-User-Token,
//   X-End-User-Session, the integration's API key header) and of the API key's query
//   parameter are `[redacted]`, whatever they hold.
// - By value: every occurrence of a secret of this call (the integration's secret, the OAuth2
//   access token, the basic pair as base64, the end user's token and session) anywhere in the
//   URL, a header or a body, request or response, is `[redacted]`: an API that echoes the key
//   back, or puts the token in a redirect URL, leaks nothing. Each secret is also looked for as
//   it travels encoded: in a URL (percent and form encoding) and in JSON (escaped).
//
// A secret of one character would turn every body into `[redacted]` soup: that is the price;
// a leak is worse.

export const REDACTED = '[redacted]';

/** Headers whose values are credentials or the end user's, whatever the integration. */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-end-user-token', 'x-end-user-session'];

/** The forms a secret may take on the way: as sent, percent-encoded, form-encoded, JSON-escaped. */
function formsOf(secret: string): string[] {
  return [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)];
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

export class Redaction {
  /** Longest first, so a secret that contains another is replaced whole. */
  private readonly forms: string[];
  private readonly headerNames: ReadonlySet<string>;
  private readonly queryNames: ReadonlySet<string>;

  constructor(secrets: readonly string[], names: { headers?: readonly string[]; query?: readonly string[] } = {}) {
    this.forms = [...new Set(secrets.filter((secret) => secret.length > 0).flatMap(formsOf))].sort((a, b) => b.length - a.length);
    this.headerNames = new Set([...CREDENTIAL_HEADERS, ...(names.headers ?? []).map((name) => name.toLowerCase())]);
    this.queryNames = new Set(names.query ?? []);
  }

  /** The text with every secret replaced. */
  text(value: string): string {
    let redacted = value;
    for (const form of this.forms) if (redacted.includes(form)) redacted = redacted.split(form).join(REDACTED);
    return redacted;
  }

  headers(headers: Readonly<Record<string, string>>): Record<string, string> {
    const redacted: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) redacted[name] = this.headerNames.has(name.toLowerCase()) ? REDACTED : this.text(value);
    return redacted;
  }

  /** The URL with the API key's query parameter and every secret replaced. */
  url(url: string): string {
    const question = url.indexOf('?');
    if (question < 0 || this.queryNames.size === 0) return this.text(url);
    const pairs = url
      .slice(question + 1)
      .split('&')
      .map((pair) => {
        const equals = pair.indexOf('=');
        const name = equals < 0 ? pair : pair.slice(0, equals);
        return this.queryNames.has(decodedName(name)) ? `${name}=${REDACTED}` : pair;
      });
    return this.text(`${url.slice(0, question)}?${pairs.join('&')}`);
  }
}
