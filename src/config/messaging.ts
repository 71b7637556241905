// Texts, email and sign-in with other providers: Twilio, SMTP, OpenID Connect.
import { optional, pattern, section, text, urlWithDefault } from './declare.js';
import type { Config, OidcProviderConfig } from './types.js';

const TWILIO_DOC =
  'Twilio (all three): real SMS codes from `TWILIO_FROM`, the `twilio` telephony provider (numbers, addresses, SMS; its auth token checks `X-Twilio-Signature`), and real calls by the built-in voice agent (see [real calls](guides/real-calls.md)); otherwise the sandbox outbox and timed sandbox calls';

const v = {
  twilioSid: optional('TWILIO_ACCOUNT_SID', TWILIO_DOC),
  twilioToken: optional('TWILIO_AUTH_TOKEN', 'Twilio auth token (with `TWILIO_ACCOUNT_SID`)'),
  twilioFrom: optional('TWILIO_FROM', 'Twilio number texts are sent from (with `TWILIO_ACCOUNT_SID`)'),
  twilioApiBase: urlWithDefault('TWILIO_API_BASE', 'https://api.twilio.com', ['http:', 'https:'], 'Twilio API origin'),
  smtpUrl: optional(
    'SMTP_URL',
    'Real email, e.g. `smtps://user:pass@smtp.example.com:465`; otherwise the sandbox outbox',
  ),
  emailFrom: text('EMAIL_FROM', 'Workspace <no-reply@localhost>', 'Sender of emails'),
  oidcProviders: optional(
    'OIDC_PROVIDERS',
    'Comma-separated slugs of OpenID Connect sign-in providers, e.g. `google,corp`',
  ),
  oidcIssuer: pattern(
    'OIDC_<SLUG>_ISSUER',
    'Per provider (slug upper-cased, `-` → `_`); redirect URI is `PUBLIC_URL/api/auth/external/<slug>/redirect`',
  ),
  oidcClientId: pattern('OIDC_<SLUG>_CLIENT_ID', "The provider's client id (required per provider)"),
  oidcClientSecret: pattern('OIDC_<SLUG>_CLIENT_SECRET', "The provider's client secret (required per provider)"),
  oidcName: pattern('OIDC_<SLUG>_NAME', 'Display name of the provider', 'the slug'),
  oidcScopes: pattern('OIDC_<SLUG>_SCOPES', 'Scopes asked for', '`openid email profile`'),
};

export const messagingSection = section<Pick<Config, 'twilio' | 'smtp' | 'emailFrom' | 'oidcProviders'>>(
  'Texts, email and sign-in',
  v,
  (read, { problem, raw, url }) => {
    const sid = read(v.twilioSid);
    const token = read(v.twilioToken);
    const from = read(v.twilioFrom);
    let twilio: Config['twilio'] = null;
    if (sid || token || from) {
      if (!sid || !token || !from)
        problem('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM must be set together');
      else twilio = { accountSid: sid, authToken: token, from, apiBase: read(v.twilioApiBase).replace(/\/$/, '') };
    }

    const emailFrom = read(v.emailFrom);
    const smtpUrl = read(v.smtpUrl);
    const smtp = smtpUrl && url('SMTP_URL', smtpUrl, ['smtp:', 'smtps:']) ? { url: smtpUrl, from: emailFrom } : null;

    const oidcProviders: OidcProviderConfig[] = [];
    for (const slug of (read(v.oidcProviders) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(slug)) {
        problem(`OIDC_PROVIDERS: "${slug}" must be lower-case letters, digits and dashes`);
        continue;
      }
      if (slug === 'providers' || slug === 'register') {
        problem(`OIDC_PROVIDERS: "${slug}" is reserved (it names a route under /api/auth/external)`);
        continue;
      }
      const key = slug.toUpperCase().replace(/-/g, '_');
      const issuer = raw(`OIDC_${key}_ISSUER`);
      const clientId = raw(`OIDC_${key}_CLIENT_ID`);
      const clientSecret = raw(`OIDC_${key}_CLIENT_SECRET`);
      if (!issuer || !clientId || !clientSecret) {
        problem(
          `OIDC_${key}_ISSUER, OIDC_${key}_CLIENT_ID and OIDC_${key}_CLIENT_SECRET are required for provider "${slug}"`,
        );
        continue;
      }
      url(`OIDC_${key}_ISSUER`, issuer, ['http:', 'https:']);
      oidcProviders.push({
        slug,
        name: raw(`OIDC_${key}_NAME`) ?? slug,
        issuer,
        clientId,
        clientSecret,
        scopes: raw(`OIDC_${key}_SCOPES`) ?? 'openid email profile',
      });
    }
    return { twilio, smtp, emailFrom, oidcProviders };
  },
);
