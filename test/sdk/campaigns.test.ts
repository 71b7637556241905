// The SDK's campaign and do-not-call helpers against a listening server (the
// timer sandbox's quick calls, the dialer driven round by round on the app's
// manual clock): a campaign created, started and waited for to the end on its
// events, its contacts and attempts read; every state move, the refused ones
// as 409 invalid_state; another user's campaign 404; waiting ended by a pause
// and by a signal; a listed number never dialled, taken off the list again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Campaign, WorkspaceApiError, WorkspaceClient } from '../../sdk/src/index.js';
import { callConfig } from '../modules/calls/support.js';
import { caller, dialUntil } from '../modules/campaigns/support.js';
import { createVerifiedUser } from '../support/factories.js';
import { type ListeningApp, startServer, within } from './support.js';

let server: ListeningApp;
beforeAll(async () => {
  server = await startServer({ config: callConfig() });
});
afterAll(() => server.close());

const client = (token: string) => new WorkspaceClient({ baseUrl: server.baseUrl, token });

/** The error a call rejected with (the test fails if it resolved). */
async function refusal(promise: Promise<unknown>): Promise<WorkspaceApiError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceApiError);
  return error as WorkspaceApiError;
}

/** A new funded user's SDK client and a draft campaign of theirs calling Grace. */
async function oneContactDraft(name: string): Promise<{ sdk: WorkspaceClient; id: string }> {
  const c = await caller(server.t);
  const sdk = client(c.user.token);
  const { id } = await sdk.campaigns.create({
    name,
    agent: { name: 'Amy' },
    fromNumberIds: [c.numberId],
    contacts: [{ name: 'Grace', phone: '+14155550123' }],
  });
  return { sdk, id };
}

describe('SDK campaign helpers', { timeout: 120_000 }, () => {
  it('creates, starts and waits for a campaign to complete on its events; reads its contacts; deletes it', async () => {
    const c = await caller(server.t);
    const sdk = client(c.user.token);
    const created = await sdk.campaigns.create({
      name: 'Reminders',
      agent: { name: 'Amy' },
      fromNumberIds: [c.numberId],
      contacts: [
        { name: 'Grace', phone: '+14155550123' },
        { name: 'Alan', phone: '+14155550000' },
        { name: 'Ada', phone: '+14155550002' },
      ],
      retry: { maxAttempts: 2, delayMinutes: 1 },
      pacing: { callsPerMinute: 60 },
    });
    expect(created.status).toBe('draft');
    expect((await sdk.campaigns.list()).items.map((x) => x.id)).toContain(created.id);
    expect((await sdk.campaigns.start(created.id)).status).toBe('running');

    const seen: string[] = [];
    let opened!: () => void;
    const firstProgress = new Promise<void>((resolve) => (opened = resolve));
    const waiting = sdk.campaigns.waitUntilDone(created.id, {
      onProgress: (p) => {
        seen.push(`${p.status}:${p.counts.pending}`);
        opened();
      },
    });
    await within(firstProgress, 10_000, 'the first progress');
    await dialUntil(server.t, async () => (await sdk.campaigns.get(created.id)).status === 'completed');
    const done: Campaign = await within(waiting, 10_000, 'the campaign to complete');
    expect(done).toMatchObject({
      id: created.id,
      status: 'completed',
      attempts: 5,
      counts: { total: 3, completed: 1, no_answer: 1, busy: 1, pending: 0, calling: 0 },
    });
    expect(seen[0]).toBe('running:3');
    expect(seen.at(-1)).toBe('completed:0');

    const page = await sdk.campaigns.contacts(created.id);
    expect(page.items.map((x) => [x.phone, x.status, x.attempts.length])).toEqual([
      ['+14155550123', 'completed', 1],
      ['+14155550000', 'no_answer', 2],
      ['+14155550002', 'busy', 2],
    ]);
    const busy = await sdk.campaigns.contacts(created.id, { status: 'busy' });
    expect(busy.items.map((x) => x.phone)).toEqual(['+14155550002']);
    // Every attempt is a call of the account, naming the campaign.
    const call = await sdk.calls.get(page.items[0]!.attempts[0]!.sessionId);
    expect(call).toMatchObject({ campaignId: created.id, status: 'completed' });

    await sdk.campaigns.delete(created.id);
    expect((await refusal(sdk.campaigns.get(created.id))).status).toBe(404);
  });

  it('moves a campaign through its states, refuses the moves its status does not allow, and keeps it from other users', async () => {
    const { sdk, id } = await oneContactDraft('Moves');
    const early = await refusal(sdk.campaigns.pause(id));
    expect([early.status, early.code]).toEqual([409, 'invalid_state']);
    await sdk.campaigns.start(id);
    expect((await refusal(sdk.campaigns.delete(id))).code).toBe('invalid_state');
    expect((await sdk.campaigns.pause(id)).status).toBe('paused');
    // A paused campaign dials nothing until resumed: the wait ends at once.
    expect((await within(sdk.campaigns.waitUntilDone(id), 10_000, 'a paused campaign')).status).toBe('paused');
    expect((await sdk.campaigns.resume(id)).status).toBe('running');

    const other = client((await createVerifiedUser(server.t)).token);
    expect((await refusal(other.campaigns.get(id))).status).toBe(404);
    expect((await refusal(other.campaigns.cancel(id))).status).toBe(404);
    expect((await other.campaigns.list()).items).toEqual([]);

    const waiting = sdk.campaigns.waitUntilDone(id);
    expect((await sdk.campaigns.cancel(id)).status).toBe('cancelled');
    expect((await within(waiting, 10_000, 'the cancelled campaign')).status).toBe('cancelled');
    expect((await refusal(sdk.campaigns.resume(id))).code).toBe('invalid_state');
    await sdk.campaigns.delete(id);
  });

  it('stops waiting when its signal aborts', async () => {
    const { sdk, id } = await oneContactDraft('Never dialled');
    await sdk.campaigns.start(id);
    const abort = new AbortController();
    const waiting = sdk.campaigns.waitUntilDone(id, { signal: abort.signal });
    abort.abort(new Error('gave up'));
    await expect(within(waiting, 10_000, 'the aborted wait')).rejects.toThrow('gave up');
    await sdk.campaigns.cancel(id);
  });
});

describe('SDK do-not-call helpers', { timeout: 120_000 }, () => {
  it('lists a number, which a campaign then never dials, and takes it off again', async () => {
    const c = await caller(server.t);
    const sdk = client(c.user.token);
    const listed = await sdk.doNotCall.add('+14155550123', { reason: 'asked by email' });
    expect(listed).toMatchObject({ phone: '+14155550123', reason: 'asked by email', source: 'api' });
    await sdk.doNotCall.add('+14155550123'); // again: nothing changes
    expect((await sdk.doNotCall.list()).items.map((x) => x.phone)).toEqual(['+14155550123']);

    const { id } = await sdk.campaigns.create({
      name: 'Listed',
      agent: { name: 'Amy' },
      fromNumberIds: [c.numberId],
      contacts: [
        { name: 'Grace', phone: '+14155550123' },
        { name: 'Ada', phone: '+14155550124' },
      ],
    });
    await sdk.campaigns.start(id);
    const waiting = sdk.campaigns.waitUntilDone(id);
    await dialUntil(server.t, async () => (await sdk.campaigns.get(id)).status === 'completed');
    const done = await within(waiting, 10_000, 'the campaign to complete');
    expect(done.counts).toMatchObject({ do_not_call: 1, completed: 1 });
    const [grace] = (await sdk.campaigns.contacts(id)).items;
    expect(grace).toMatchObject({ status: 'do_not_call', attempts: [] });

    const other = client((await createVerifiedUser(server.t)).token);
    expect((await other.doNotCall.list()).items).toEqual([]);
    await sdk.doNotCall.remove('+14155550123');
    expect((await sdk.doNotCall.list()).items).toEqual([]);
    expect((await refusal(sdk.doNotCall.remove('+14155550123'))).status).toBe(404);
  });
});
