// Tenant slugs name the public chat page (/chat/{slug}) and the branding lookup, so they
// follow DNS-label rules: 3 to 63 characters of a-z, 0-9 and '-', starting with a letter,
// not ending with '-', no '--', and none of the words the platform keeps for itself.

export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'admin', 'api', 'app', 'assets', 'auth', 'billing', 'chat', 'console', 'dashboard', 'docs', 'graphql',
  'health', 'help', 'login', 'metrics', 'public', 'ready', 'register', 'root', 'settings', 'signup',
  'static', 'status', 'support', 'svc', 'system', 'widget', 'www', 'ws',
]);

const SLUG_SHAPE = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;

/** Why a slug is refused, or null when it is acceptable. */
export function slugProblem(slug: string): string | null {
  if (!SLUG_SHAPE.test(slug)) {
    return 'a slug is 3 to 63 characters of a-z, 0-9 and "-", starting with a letter and not ending with "-"';
  }
  if (slug.includes('--')) return 'a slug may not contain "--"';
  if (RESERVED_SLUGS.has(slug)) return `"${slug}" is reserved`;
  return null;
}

/** A slug suggestion from an organization name: "Acme Shoes, Inc." -> "acme-shoes-inc". */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
  const withLetter = /^[a-z]/.test(base) ? base : `org-${base}`;
  return withLetter.length >= 3 ? withLetter : `${withLetter}-org`.replace(/^-/, '');
}
