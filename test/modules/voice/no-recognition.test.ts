import { describe, expect, it } from 'vitest';
import { NoRecognition, NOT_RECOGNISED } from '../../../src/providers/speech-to-text/none.js';

describe('NoRecognition', () => {
  it('answers each utterance with one final "(speech not recognised)" and ends when closed', async () => {
    const controller = new AbortController();
    const stream = new NoRecognition().open({ signal: controller.signal });
    stream.write(new Int16Array(8000));
    stream.endUtterance();
    stream.write(new Int16Array(4000));
    stream.endUtterance();
    const results: unknown[] = [];
    const reading = (async () => {
      for await (const r of stream.results) results.push(r);
    })();
    await new Promise((r) => setImmediate(r));
    await stream.close();
    await reading;
    expect(results).toEqual([
      { text: NOT_RECOGNISED, final: true, startMs: 0, endMs: 1000 },
      { text: NOT_RECOGNISED, final: true, startMs: 1000, endMs: 1500 },
    ]);
  });
});
