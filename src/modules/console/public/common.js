// What every console page shares: calling the API on this origin with the
// session cookie, the sign-in form (its markup is in public/layout.html, around
// every page), and formatting. No framework and no build step: elements are
// built with el(), never from HTML strings.

/** An API answer that was not 2xx: its status, the service's stable error code and the whole body (e.g. a 422's `errors`). */
export class ApiError extends Error {
  constructor(status, code, message, body = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** Calls the API with the session cookie; JSON in and out. */
export async function api(path, { method = 'GET', body, headers = {} } = {}) {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok)
    throw new ApiError(
      response.status,
      data?.code ?? null,
      data?.message ?? `${response.status} ${response.statusText}`,
      data,
    );
  return { data, headers: response.headers };
}

/** document.createElement with attributes (`text` sets the text) and children (strings become text). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
  return node;
}

export const byId = (id) => document.getElementById(id);

/** 83 → "1:23"; null → "—". */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

export function formatDate(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** What a call cost: a web call is a free test call; no figure yet shows a dash. */
export function formatCost(call) {
  if (typeof call.costUsd === 'number') return `$${call.costUsd.toFixed(2)}`;
  return call.direction === 'web' ? 'free' : '—';
}

export function formatMs(ms) {
  return typeof ms === 'number' ? `${Math.round(ms)} ms` : '—';
}

async function authStatus() {
  try {
    return (await api('/api/auth')).data;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

const STATUS_HELP = {
  phone_not_verified:
    'This account has not verified its phone number yet, and calls need it: verify it (POST /api/auth/verify/request, then /api/auth/verify/submit), then sign in again.',
};

/**
 * Shows the sign-in form until the session cookie signs the browser in, then
 * the page's content; `onSignedIn(auth)` runs once with the signed-in user.
 */
export async function startPage(onSignedIn) {
  const panel = byId('sign-in-panel');
  const content = byId('content');
  const form = byId('sign-in-form');
  const error = byId('sign-in-error');
  const twoFactor = byId('two-factor');
  const who = byId('who');
  const signOut = byId('sign-out');
  let limitedToken = null;

  const show = async (status) => {
    const signedIn = status && status.status === 'ok';
    panel.hidden = Boolean(signedIn);
    content.hidden = !signedIn;
    who.hidden = !status?.auth;
    signOut.hidden = !status?.auth;
    who.textContent = status?.auth ? status.auth.email : '';
    if (status && !signedIn)
      error.textContent = STATUS_HELP[status.status] ?? `Signed in, but the account's status is ${status.status}.`;
    if (signedIn) await onSignedIn(status.auth);
    else byId('email').focus();
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const button = byId('sign-in-button');
    button.disabled = true;
    try {
      let answer;
      if (limitedToken) {
        answer = (
          await api('/api/auth/2fa/verify', {
            method: 'POST',
            body: { token: byId('code').value.trim() },
            headers: { authorization: `Bearer ${limitedToken}` },
          })
        ).data;
      } else {
        answer = (
          await api('/api/auth/login', {
            method: 'POST',
            body: { email: byId('email').value.trim(), password: byId('password').value },
          })
        ).data;
      }
      if (answer.status === '2fa_required') {
        limitedToken = answer.token;
        twoFactor.hidden = false;
        byId('code').required = true;
        byId('code').focus();
        error.textContent = 'Enter the code from your authenticator app (or a recovery code).';
        return;
      }
      limitedToken = null;
      twoFactor.hidden = true;
      byId('password').value = '';
      await show(await authStatus());
    } catch (err) {
      error.textContent =
        err instanceof ApiError && (err.code === 'invalid_credentials' || err.status === 400)
          ? 'Wrong email or password (or code).'
          : `Sign-in failed: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  });

  signOut.addEventListener('click', async () => {
    // POST: signing out changes state (a GET with the cookie from another site is refused).
    await api('/api/auth/logout', { method: 'POST' }).catch(() => {});
    location.reload();
  });

  try {
    await show(await authStatus());
  } catch (err) {
    error.textContent = `The service did not answer: ${err.message}`;
    panel.hidden = false;
  }
}
