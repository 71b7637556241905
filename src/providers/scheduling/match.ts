// How an integration's event type reference (a scheduling URL, an API uri or
// a slug) is matched against a list of event types. Shared by the real
// adapter and the integrations service's messages.

export const normalizeUrl = (value: string): string | null => {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host.toLowerCase()}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return null;
  }
};

/** The slug a reference names: a URL's last path segment, or the value itself. */
export function slugOf(ref: string): string {
  const url = /^https?:\/\//i.test(ref) ? normalizeUrl(ref) : null;
  return (url ? (url.split('/').pop() ?? '') : ref.trim()).toLowerCase();
}

/** By scheduling URL or API uri, else by slug. */
export function matchEventType<T extends { uri: string; slug: string; schedulingUrl: string }>(
  types: readonly T[],
  ref: string,
): T | null {
  const url = /^https?:\/\//i.test(ref) ? normalizeUrl(ref) : null;
  if (url) {
    const exact = types.find((t) => normalizeUrl(t.schedulingUrl) === url || normalizeUrl(t.uri) === url);
    if (exact) return exact;
  }
  const slug = slugOf(ref);
  return types.find((t) => t.slug.toLowerCase() === slug) ?? null;
}
