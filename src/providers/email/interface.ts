export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Machine-readable part (token, url), kept by the sandbox outbox only. */
  data?: Record<string, unknown>;
}

export interface EmailProvider {
  readonly name: string;
  readonly sandbox: boolean;
  send(message: EmailMessage): Promise<{ id: string }>;
}
