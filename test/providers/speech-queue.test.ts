// The local speech queue: a call's sentences go ahead of previews and are
// never refused because of them or of other calls (room per call, none in
// total); previews get only spare room, a share of their own and a cap per
// account. Jobs are promises the test settles, so
// nothing sleeps.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import {
  type SpeechQueueLimits,
  type SpeechRequest,
  SpeechQueue,
  defaultSpeechQueueLimits,
} from '../../src/providers/voice/speech-queue.js';

/** A queue whose jobs record when they start and end when the test says. */
function harness(limits: Partial<SpeechQueueLimits> = {}) {
  const queue = new SpeechQueue({ ...defaultSpeechQueueLimits(1), ...limits });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const submit = (name: string, request: SpeechRequest) =>
    queue
      .run(request, () => {
        started.push(name);
        return new Promise<string>((resolve) => finishers.set(name, () => resolve(name)));
      })
      .then(
        (value) => value,
        (err: unknown) => (err instanceof AppError ? `${err.code}` : (err as Error).name),
      );
  const finish = async (name: string) => {
    finishers.get(name)!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { queue, started, submit, finish };
}

const call: SpeechRequest = { priority: 'call' };
const preview = (account: string): SpeechRequest => ({ priority: 'preview', account });

describe('SpeechQueue', () => {
  it('starts a waiting call before previews that came earlier', async () => {
    const { submit, started, finish } = harness();
    void submit('p1', preview('a'));
    void submit('p2', preview('b'));
    void submit('c1', call);
    expect(started).toEqual(['p1']);
    await finish('p1');
    expect(started).toEqual(['p1', 'c1']);
    await finish('c1');
    expect(started).toEqual(['p1', 'c1', 'p2']);
  });

  it('admits calls while previews fill their share, and never refuses a call because of previews', async () => {
    const { submit, queue } = harness({ spareRoom: 3, maxPreviews: 2, maxPreviewsPerAccount: 2 });
    void submit('p1', preview('a'));
    void submit('p2', preview('b'));
    expect(await submit('p3', preview('c'))).toBe('rate_limited'); // the preview share is full
    for (const name of ['c1', 'c2', 'c3']) void submit(name, { priority: 'call', call: name });
    expect(queue.size()).toEqual({ calls: 3, previews: 2 });
    // Past the spare room previews are refused; a new call still speaks.
    expect(await submit('p4', preview('d'))).toBe('rate_limited');
    void submit('c4', { priority: 'call', call: 'c4' });
    expect(queue.size()).toEqual({ calls: 4, previews: 2 });
  });

  it('has room for every call that starts at once: ten greetings all spoken, in order, past the spare room', async () => {
    const { submit, finish, started, queue } = harness({ spareRoom: 8 });
    const calls = Array.from({ length: 10 }, (_, i) => `call-${i}`);
    const outcomes = calls.map((name) => submit(name, { priority: 'call', call: name }));
    expect(queue.size().calls).toBe(10);
    // A preview asked now finds no spare room.
    expect(await submit('p1', preview('a'))).toBe('rate_limited');
    for (const name of calls) await finish(name);
    expect(started).toEqual(calls);
    expect(await Promise.all(outcomes)).toEqual(calls);
    expect(queue.size()).toEqual({ calls: 0, previews: 0 });
  });

  it('bounds each call on its own: a call past its room is refused, another call is not', async () => {
    const { submit, finish, queue } = harness({ maxPendingPerCall: 2 });
    const mine: SpeechRequest = { priority: 'call', call: 'mine' };
    void submit('m1', mine);
    void submit('m2', mine);
    expect(await submit('m3', mine)).toBe('rate_limited');
    void submit('o1', { priority: 'call', call: 'other' });
    expect(queue.size().calls).toBe(3);
    // Untagged call jobs share one room of their own.
    void submit('u1', call);
    void submit('u2', call);
    expect(await submit('u3', call)).toBe('rate_limited');
    expect(queue.size().calls).toBe(5);
    // Once a sentence of the call is done, it has room again.
    await finish('m1');
    void submit('m4', mine);
    expect(queue.size().calls).toBe(5);
  });

  it('says why a call sentence is refused', async () => {
    const queue = new SpeechQueue({ ...defaultSpeechQueueLimits(1), maxPendingPerCall: 1 });
    void queue.run({ priority: 'call', call: 'x' }, () => new Promise(() => {}));
    const err = await queue.run({ priority: 'call', call: 'x' }, async () => 'never').catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('sentences of this call'),
      headers: { 'retry-after': '2' },
    });
  });

  it('gives previews only spare room: none while calls fill the queue', async () => {
    const { submit, finish, queue } = harness({ spareRoom: 2 });
    void submit('c1', call);
    void submit('c2', call);
    expect(await submit('p1', preview('a'))).toBe('rate_limited');
    await finish('c1');
    void submit('p2', preview('a'));
    expect(queue.size()).toEqual({ calls: 1, previews: 1 });
  });

  it('caps the previews of one account, so another account still gets its preview', async () => {
    const { submit, finish, started } = harness({ maxPreviewsPerAccount: 2, maxPreviews: 4 });
    const first = submit('a1', preview('a'));
    void submit('a2', preview('a'));
    const refused = await submit('a3', preview('a'));
    expect(refused).toBe('rate_limited');
    void submit('b1', preview('b'));
    // Once one of a's previews is done, a may ask again.
    await finish('a1');
    expect(await first).toBe('a1');
    void submit('a4', preview('a'));
    expect(started).toEqual(['a1', 'a2']);
    await finish('a2');
    expect(started).toEqual(['a1', 'a2', 'b1']);
  });

  it('says why a preview is refused', async () => {
    const queue = new SpeechQueue({ ...defaultSpeechQueueLimits(1), maxPreviewsPerAccount: 1 });
    void queue.run(preview('a'), () => new Promise(() => {}));
    const err = await queue.run(preview('a'), async () => 'never').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('your local previews'),
      headers: { 'retry-after': '2' },
    });
  });

  it('keeps a running slot for calls when it runs more than one job at once', async () => {
    const { submit, started, finish } = harness({ concurrency: 2, maxRunningPreviews: 1 });
    void submit('p1', preview('a'));
    void submit('p2', preview('b'));
    expect(started).toEqual(['p1']); // the second slot is kept for a call
    void submit('c1', call);
    expect(started).toEqual(['p1', 'c1']);
    await finish('p1');
    expect(started).toEqual(['p1', 'c1', 'p2']);
  });

  it('withdraws a waiting job whose signal aborts, and gives its place back', async () => {
    const { submit, started, finish, queue } = harness({ maxPendingPerCall: 2 });
    void submit('c1', call);
    const controller = new AbortController();
    const withdrawn = submit('c2', { priority: 'call', signal: controller.signal });
    expect(queue.size().calls).toBe(2);
    controller.abort();
    expect(await withdrawn).toBe('AbortError');
    expect(queue.size().calls).toBe(1);
    void submit('c3', call);
    await finish('c1');
    expect(started).toEqual(['c1', 'c3']);
  });

  it('frees the place of a job that fails, and of every waiting job on clear', async () => {
    const queue = new SpeechQueue({ ...defaultSpeechQueueLimits(1), maxPreviewsPerAccount: 1 });
    await expect(queue.run(preview('a'), async () => Promise.reject(new Error('espeak-ng crashed')))).rejects.toThrow(
      'crashed',
    );
    void queue.run(call, () => new Promise(() => {}));
    const waiting = queue.run(preview('a'), async () => 'never');
    queue.clear(new AppError('not_ready', 'closing'));
    await expect(waiting).rejects.toMatchObject({ code: 'not_ready' });
    expect(queue.size()).toEqual({ calls: 1, previews: 0 });
  });
});
