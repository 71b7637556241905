// The old { name?, steps } list in a call's system prompt (call-design.ts):
// spelled out for external audio servers, taken out again by the built-in
// voice session, which walks the list's linear document and gives the model
// each step as it comes.
import { describe, expect, it } from 'vitest';
import { CallTemplates, pathwayPrompt, withoutStepsListing } from '../../../src/modules/calls/call-design.js';

const templates = () => new CallTemplates({ variables: { first_name: 'Grace' }, contact: null, now: 0 });
const legacy = (name?: string) => ({
  id: null,
  name: name ?? 'Pathway',
  document: {},
  legacy: { ...(name ? { name } : {}), steps: ['Greet {{first_name}}', 'Confirm the time'] },
});

describe('the old steps listing', () => {
  it('is one paragraph of the prompt, which withoutStepsListing takes out and nothing else', () => {
    for (const [pathway, named] of [
      [legacy(), true],
      [legacy('Confirm'), true],
      [legacy('Confirm'), false],
    ] as const) {
      const listing = pathwayPrompt(pathway, templates(), { named })!;
      expect(listing).toContain('1. Greet Grace\n2. Confirm the time');
      const prompt = [
        'You are Amy, calling Grace.',
        'Be brief.',
        listing,
        'What you know about Grace:\n- plan: gold',
      ].join('\n\n');
      expect(withoutStepsListing(prompt)).toBe(
        'You are Amy, calling Grace.\n\nBe brief.\n\nWhat you know about Grace:\n- plan: gold',
      );
    }
  });

  it("leaves a prompt without one as it is, and a document pathway's sentence", () => {
    const documentPart = pathwayPrompt({ ...legacy('Orders'), legacy: null }, templates(), { named: true })!;
    const prompt = `You are Amy.\n\nFollow this conversation pathway carefully.\n\n${documentPart}`;
    expect(withoutStepsListing(prompt)).toBe(prompt);
  });
});
