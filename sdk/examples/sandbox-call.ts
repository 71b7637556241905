// A sandbox call, start to finish: sign up and verify the phone through the
// sandbox outbox, buy a sandbox number (the sandbox checkout adds a card),
// give the agent a knowledge base with the opening hours and the sandbox
// Calendly, register a server, sign a call request with its private key
// (nested in a JWE to the service key), start the call and print its progress
// events until it ends, its tool calls and each answer's latency, then save its recording (both voices: the caller left, the agent
// right) to call-<session id>.wav, and print where the console shows it. Against a local server started with `npm start`:
//
//   npx tsx sdk/examples/sandbox-call.ts
//
// BASE_URL overrides http://127.0.0.1:3000; TO the number called (+14155550123);
// RECORDING_FILE where the recording goes.
import { writeFileSync } from 'node:fs';
import { WorkspaceApiError, WorkspaceClient, signCallRequest } from '../src/index.js';

const baseUrl = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const to = process.env.TO ?? '+14155550123';
const client = new WorkspaceClient({ baseUrl });

// 1. A fresh account with a verified phone (call sessions are a data-plane route).
const unique = String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0');
const phone = `+1555${unique}`;
const password = 'correct horse battery staple';
const email = `call.${Date.now()}.${unique}@example.com`;
await client.auth.register({
  firstName: 'Ada',
  lastName: 'Lovelace',
  email,
  phone,
  password,
  confirmPassword: password,
});
await client.auth.requestPhoneVerification();
const [sms] = await client.sandboxOutbox({ to: phone });
if (!sms)
  throw new Error(`no SMS for ${phone} in the sandbox outbox: is the server running with the sandbox SMS provider?`);
await client.auth.submitPhoneVerification(String(sms.data.code));
console.log(`1. signed up and verified ${phone}`);

// 2. A voice-capable number to call from: the first purchase asks for a card, which the sandbox checkout adds.
const json = async (path: string, init: { method?: string; body?: string } = {}) => {
  const res = await client.http.send(`${baseUrl}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, any> };
};
const offers = (await json('/api/phone-numbers/search/sandbox?country=US&type=local')).body as unknown as Array<{
  phoneNumber: string;
  capabilities: { voice: boolean };
  addressRequirements: string;
  price: { jwt: string };
}>;
const offer = offers.find((o) => o.capabilities.voice && o.addressRequirements === 'none');
if (!offer) throw new Error('the sandbox offered no voice-capable number');
// Calls cost money (plan allowance or prepaid balance): $5 of credit, paid on the sandbox checkout page.
const topUp = await json('/api/credits/add?amount=5', { method: 'POST', body: '{}' });
if (topUp.status !== 200) throw new Error(`top-up failed: ${topUp.status} ${JSON.stringify(topUp.body)}`);
await client.http.send(`${baseUrl}${new URL(topUp.body.url).pathname}`, { method: 'POST' });
let bought = await json('/api/phone-numbers', { method: 'PUT', body: JSON.stringify({ jwt: offer.price.jwt }) });
if (bought.status === 409 && bought.body.code === 'payment_method_required') {
  await client.http.send(`${baseUrl}${new URL(bought.body.checkoutUrl).pathname}`, { method: 'POST' });
  bought = await json('/api/phone-numbers', { method: 'PUT', body: JSON.stringify({ jwt: offer.price.jwt }) });
}
if (bought.status !== 200)
  throw new Error(`buying ${offer.phoneNumber} failed: ${bought.status} ${JSON.stringify(bought.body)}`);
console.log(`2. bought ${offer.phoneNumber}`);

// 3. What the agent knows and how it books: a knowledge base with the opening hours, and the sandbox Calendly.
const kb = await json('/api/knowledge-bases', { method: 'PUT', body: JSON.stringify({ name: 'Clinic' }) });
const form = new FormData();
form.append(
  'files',
  new Blob(['Opening hours: we are open Monday to Friday from nine to five.\n'], { type: 'text/plain' }),
  'hours.txt',
);
const uploaded = await client.http.send(`${baseUrl}/api/knowledge-bases/${kb.body.id}`, { method: 'POST', body: form });
if (!uploaded.ok) throw new Error(`uploading the opening hours failed: ${uploaded.status} ${await uploaded.text()}`);
const calendly = await json('/api/integrations', {
  method: 'PUT',
  body: JSON.stringify({
    type: 'calendly',
    data: { pat: 'sandbox-token', eventTypeUrl: 'https://calendly.com/clinic/30min' },
  }),
});
if (calendly.status !== 200)
  throw new Error(`connecting the sandbox Calendly failed: ${calendly.status} ${JSON.stringify(calendly.body)}`);
console.log('3. a knowledge base with the opening hours, and the sandbox Calendly');

// 4. A server whose private key stays here signs the call.
const server = await client.servers.register({ name: `calls-${unique}`, mode: 'generate' });
const jwt = await signCallRequest(
  server.privateKey!,
  {
    agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
    contact: { name: 'Grace', phone: to, fields: { appointment: 'Tuesday at 10:00' } },
    type: 'prompt',
    prompt: 'Confirm the appointment and thank the contact.',
    phoneNumberId: bought.body.id,
    knowledgeBase: { id: kb.body.id },
    integrations: [calendly.body.id],
  },
  await client.servers.current(),
);
console.log(`4. signed a call request with server ${server.name}`);

// 5. Start it and follow its progress until it ends.
let sessionId: string;
try {
  ({ sessionId } = await client.calls.start({ server: server.name, jwt }, { idempotencyKey: crypto.randomUUID() }));
} catch (err) {
  if (err instanceof WorkspaceApiError)
    throw new Error(`the call was refused: ${err.status} ${err.code} ${err.message}`);
  throw err;
}
console.log(`5. call session ${sessionId}`);
const events = client.events.subscribe('call_status', { filter: { session_id: sessionId }, lastEventId: '0' });
for await (const event of events) {
  const { status, duration_seconds, transcript } = event.data;
  console.log(`   ${status}${duration_seconds !== undefined ? ` after ${duration_seconds} s` : ''}`);
  for (const line of transcript ?? []) console.log(`     ${line.role}: ${line.text}`);
  if (!['queued', 'ringing', 'in_progress'].includes(status)) break;
}
events.close();

// 6. The call's record is written as it ends; with CALL_RECORDING (on by default with the sandbox carrier) it has a recording.
let call = await client.calls.get(sessionId);
for (let tries = 0; !call.transcript?.length && tries < 50; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 200));
  call = await client.calls.get(sessionId);
}
for (const tool of call.toolCalls ?? [])
  console.log(`   tool ${tool.name} ${JSON.stringify(tool.arguments)} → ${JSON.stringify(tool.result).slice(0, 160)}`);
// Each answer's latency: from the end of the caller's turn to the agent's first audio, per stage.
for (const line of call.transcript ?? []) {
  const l = line.latency;
  if (l)
    console.log(
      `   latency ${l.totalMs} ms (speech to text ${l.sttMs}, model ${l.llmFirstTokenMs}, speech ${l.ttsFirstByteMs}, overhead ${l.overheadMs}) before "${line.text.slice(0, 48)}${line.text.length > 48 ? '…' : ''}"`,
    );
}
if (call.recordingUrl) {
  const file = process.env.RECORDING_FILE ?? `call-${sessionId}.wav`;
  writeFileSync(file, await client.calls.recording(sessionId));
  console.log(`6. recording saved to ${file} (the caller left, the agent right)`);
} else console.log('6. no recording (CALL_RECORDING=0, or a call that carried no audio: SANDBOX_CALLS=timer)');
// 7. The same call in the console, signed in as this account (a browser on this machine).
console.log(`7. open ${baseUrl}/console/calls/${sessionId} and sign in as ${email}, password "${password}"`);
console.log('done');
