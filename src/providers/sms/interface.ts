export interface SmsMessage {
  to: string;
  body: string;
  /** Sender; the provider's configured number when omitted. */
  from?: string;
  /** Where the provider reports delivery updates. */
  statusCallbackUrl?: string;
  /** Machine-readable part (e.g. the code), kept by the sandbox outbox only. */
  data?: Record<string, unknown>;
}

export interface SmsResult {
  id: string;
  status: string;
}

export interface SmsProvider {
  readonly name: string;
  readonly sandbox: boolean;
  send(message: SmsMessage): Promise<SmsResult>;
}
