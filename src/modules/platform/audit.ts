import type { Clock } from '../../lib/clock.js';
import type { PlatformStore } from './store.js';

/** Who made a request, for the audit log and per-IP limits. */
export interface RequestMeta {
  ip: string;
  userAgent: string | null;
}

export type AuditAction =
  | 'register'
  | 'login'
  | 'logout'
  | 'phone.verify_request'
  | 'phone.verify'
  | 'phone.change'
  | 'password.reset_request'
  | 'password.reset'
  | '2fa.setup'
  | '2fa.enable'
  | '2fa.verify'
  | '2fa.reset'
  | 'external.login'
  | 'external.link'
  | 'api_key.create'
  | 'api_key.delete';

/** Append-only record of sign-ins and credential changes (who, what, when, from where). */
export class AuditLog {
  constructor(
    private readonly store: PlatformStore,
    private readonly clock: Clock,
  ) {}

  record(entry: {
    userId: string | null;
    action: AuditAction;
    success: boolean;
    meta: RequestMeta;
    detail?: Record<string, unknown>;
  }) {
    return this.store.insertAudit({
      userId: entry.userId,
      action: entry.action,
      success: entry.success,
      ip: entry.meta.ip,
      userAgent: entry.meta.userAgent,
      detail: entry.detail ?? null,
      createdAt: this.clock.now(),
    });
  }

  listForUser(userId: string) {
    return this.store.listAudit(userId);
  }
}
