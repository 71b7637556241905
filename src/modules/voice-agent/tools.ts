// What a live call's tools act on (DESIGN.md "Voice agent"): the call's
// knowledge base through the knowledge area, its Calendly integrations
// through the integrations area, always as the call's owner. A lookup the
// caller spoke over (its signal aborted) stops before its next request.
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { VoiceToolServices } from './runner.js';

export function createVoiceToolServices(
  knowledge: Pick<KnowledgeService, 'search'>,
  integrations: Pick<IntegrationService, 'invoke'>,
  /** The account's do-not-call list (the campaigns area): the agent's opt_out tool lists the caller's number there. */
  doNotCall?: { optOut(userId: string, phone: string, sessionId: string): Promise<void> },
): VoiceToolServices {
  return {
    ...(doNotCall ? { optOut: (userId, phone, sessionId) => doNotCall.optOut(userId, phone, sessionId) } : {}),
    async searchKnowledge(userId, knowledgeBaseId, query, signal) {
      signal?.throwIfAborted();
      const matches = await knowledge.search(userId, knowledgeBaseId, query);
      return matches.map((m) => ({ text: m.text, title: m.document.name, score: m.score }));
    },
    async checkAvailability(userId, integrationIds, date, signal) {
      // The first integration with open times answers: a call books one calendar.
      for (const id of integrationIds) {
        signal?.throwIfAborted();
        const answer = await integrations.invoke(
          userId,
          id,
          'check_availability',
          date ? { start_date: date, days: 1 } : {},
        );
        const slots = (answer.slots as Array<{ start_time: string }> | undefined) ?? [];
        if (slots.length) return slots.map((s) => s.start_time);
      }
      return [];
    },
    async bookMeeting(userId, integrationIds, input) {
      const [id] = integrationIds;
      if (!id) return { booked: false, start: input.start, message: 'no calendar is connected to this call' };
      const answer = await integrations.invoke(userId, id, 'book_meeting', {
        start_time: input.start,
        ...(input.name ? { name: input.name } : {}),
        ...(input.email ? { email: input.email } : {}),
      });
      if (answer.status !== 'link_created')
        return { booked: false, start: input.start, message: String(answer.message ?? 'that slot is not free') };
      return {
        booked: true,
        start: String(answer.start_time ?? input.start),
        bookingUrl: String(answer.booking_url),
        message: String(answer.message),
      };
    },
  };
}
