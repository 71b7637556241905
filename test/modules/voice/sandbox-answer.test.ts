// The sandbox dialogue engine answers a question with the passage that
// answers it (issue 44): not a heading, a title or the FAQ's question read
// back. Played through the engine as a reply does: the caller's question, the
// engine's search_knowledge call, its result.
import { describe, expect, it } from 'vitest';
import { SandboxDialogue } from '../../../src/providers/language-model/sandbox.js';
import type { ChatMessage } from '../../../src/providers/language-model/interface.js';
import { ToolRegistry } from '../../../src/modules/voice/tools.js';

/** What the engine says to `question` when the knowledge base answers with `matches` (best first). */
async function answerFrom(question: string, matches: Array<{ text: string; title?: string }>): Promise<string> {
  const model = new SandboxDialogue();
  const tools = new ToolRegistry({
    searchKnowledge: async () => matches,
    checkAvailability: async () => [],
    bookMeeting: async (i) => ({ booked: false, start: i.start }),
    transferToHuman: async () => ({ ok: false }),
    endCall: () => {},
  });
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are Amy, answering calls to Main line.' },
    { role: 'user', content: question },
  ];
  for (let round = 0; round < 3; round++) {
    let text = '';
    const calls = [];
    for await (const d of model.complete({ messages, tools: tools.specs(), signal: new AbortController().signal })) {
      if (d.type === 'text') text += d.text;
      if (d.type === 'tool_call') calls.push(d.call);
    }
    if (!calls.length) return text;
    messages.push({ role: 'assistant', content: text || null, tool_calls: calls });
    for (const call of calls) {
      const { result } = await tools.call(call.function.name, call.function.arguments, new AbortController().signal);
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  throw new Error('no answer');
}

const MARKDOWN_FAQ = `# Frequently asked questions

## What are your opening hours?
We are open Monday to Friday, 9 a.m. to 5 p.m.

## Where can I park?
There is free parking behind the building.

**Q: Do you take walk-ins?**
A: We do. Walk-ins are seen every morning until eleven.
`;

const PLAIN_PAGE = `Acme Dental

Opening hours.
We are open Monday to Friday from 8am to 6pm. On Saturdays we open from 9am to 1pm.

Parking
The car park behind the clinic is free for patients.

Prices
A check-up costs 45 pounds.
`;

describe('sandbox dialogue engine: the passage that answers', () => {
  it('a Markdown FAQ: the answer under the question, not the heading or the question', async () => {
    expect(await answerFrom('What are your opening hours?', [{ text: MARKDOWN_FAQ, title: 'faq.md' }])).toBe(
      'We are open Monday to Friday, 9 a.m. to 5 p.m.',
    );
    expect(await answerFrom('Where can I park?', [{ text: MARKDOWN_FAQ }])).toBe(
      'There is free parking behind the building.',
    );
    // A short reply is said with the sentence that follows it.
    expect(await answerFrom('Do you take walk-ins?', [{ text: MARKDOWN_FAQ }])).toBe(
      'We do. Walk-ins are seen every morning until eleven.',
    );
  });

  it('"Q: … A: …" on one line answers with the A part, found by its question', async () => {
    const faq =
      'Q: What are your opening hours? A: We are open from nine to five, Monday to Friday. Q: Can I park there? A: Yes, behind the building.';
    expect(await answerFrom('What are your opening hours?', [{ text: faq }])).toBe(
      'We are open from nine to five, Monday to Friday.',
    );
    expect(await answerFrom('Can I park there?', [{ text: faq }])).toBe('Yes, behind the building.');
    // The answer set apart from its question by a blank line; a question asked back at the reader is not an answer either.
    const spaced =
      'Question: Do you deliver?\n\nAnswer: Yes. Orders go out every Tuesday and Friday.\n\nNeed parking? Use the lot behind the store.';
    expect(await answerFrom('Do you deliver?', [{ text: spaced }])).toBe(
      'Yes. Orders go out every Tuesday and Friday.',
    );
    expect(await answerFrom('Is there parking?', [{ text: spaced }])).toBe('Use the lot behind the store.');
  });

  it('a plain text page with headings: the sentence under the heading, not the title or the heading', async () => {
    expect(
      await answerFrom('Can you tell me your opening hours please?', [{ text: PLAIN_PAGE, title: 'Acme Dental' }]),
    ).toBe('We are open Monday to Friday from 8am to 6pm.');
    expect(await answerFrom('Where can I park?', [{ text: PLAIN_PAGE }])).toBe(
      'The car park behind the clinic is free for patients.',
    );
    expect(await answerFrom('How much is a check-up?', [{ text: PLAIN_PAGE }])).toBe('A check-up costs 45 pounds.');
  });

  it('a heading run into its text on one line ("Opening hours. We are open …") answers with the text', async () => {
    expect(
      await answerFrom('Can you tell me your opening hours please?', [
        { text: 'Opening hours. We are open Monday to Friday from nine to five.' },
      ]),
    ).toBe('We are open Monday to Friday from nine to five.');
  });

  it('a one-line answer is said whole', async () => {
    const line = 'Opening hours: we are open Monday to Friday from nine to five.';
    expect(await answerFrom('Can you tell me your opening hours please?', [{ text: line }])).toBe(line);
  });

  it('a line ending in a colon is said with its list', async () => {
    const text =
      'Our opening hours are:\n- Monday to Friday: 9 to 5\n- Saturday: 10 to 2\n\nWe are closed on bank holidays.';
    expect(await answerFrom('What are your opening hours?', [{ text }])).toBe(
      'Our opening hours are: Monday to Friday: 9 to 5 Saturday: 10 to 2',
    );
  });

  it('hard-wrapped lines are read as one sentence', async () => {
    const text = 'Parking\nThere is a free car park behind the\nclinic, open from 8am.';
    expect(await answerFrom('Where can I park?', [{ text }])).toBe(
      'There is a free car park behind the clinic, open from 8am.',
    );
  });

  it('a match of only headings and questions gives way to the next match; none at all is said plainly', async () => {
    expect(
      await answerFrom('What are your opening hours?', [
        { text: '# Opening hours\n\nWhat are your opening hours?' },
        { text: 'We open at nine and close at five.' },
      ]),
    ).toBe('We open at nine and close at five.');
    expect(await answerFrom('What are your opening hours?', [{ text: 'Opening hours.' }])).toBe(
      "I'm sorry, I don't have information about that.",
    );
  });

  it('still picks the sentence sharing most words with the question', async () => {
    expect(
      await answerFrom('where can I park?', [
        { text: 'We are a shop. Parking is free behind the store. Opening hours are 9 to 5.' },
      ]),
    ).toBe('Parking is free behind the store.');
  });
});
