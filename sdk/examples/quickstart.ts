// Quickstart: sign up, verify the phone through the sandbox outbox, store an
// encrypted contact, receive its object_created event, read it back and
// decrypt it. Against a local server started with `npm start`:
//
//   npx tsx sdk/examples/quickstart.ts
//
// BASE_URL overrides the default http://127.0.0.1:3000.
import { WorkspaceClient } from '../src/index.js';

interface Contact {
  name: string;
  email: string;
  phone: string;
}

const baseUrl = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const client = new WorkspaceClient({ baseUrl });

// A fresh account each run: a random email and a +1 555 number.
const unique = String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0');
const email = `quickstart.${Date.now()}.${unique}@example.com`;
const phone = `+1555${unique}`;
const password = 'correct horse battery staple';

// 1. Register: the answer's token is kept by the client (status phone_not_verified).
const session = await client.auth.register({
  firstName: 'Ada',
  lastName: 'Lovelace',
  email,
  phone,
  password,
  confirmPassword: password,
});
console.log(`1. registered ${email} — status ${session.status}`);

// 2. Verify the phone: the sandbox SMS provider puts the code in the outbox.
await client.auth.requestPhoneVerification();
const [sms] = await client.sandboxOutbox({ to: phone });
if (!sms)
  throw new Error(`no SMS for ${phone} in the sandbox outbox: is the server running with the sandbox SMS provider?`);
const verified = await client.auth.submitPhoneVerification(String(sms.data.code));
console.log(`2. verified ${phone} with code ${String(sms.data.code)} — status ${verified.status}`);

// 3. The contacts store: its container object and default key come from GET /api/root.
const contacts = client.store<Contact>('contacts');
const store = await contacts.describe();
console.log(`3. contacts store ${store.id}, key ${store.keyId}`);

// 4. Subscribe to object_created events of this store before writing.
const events = await contacts.subscribe();
await events.ready;
console.log('4. subscribed to object_created events of the contacts store');

// 5. Create a contact: encrypted here (AES-256-GCM, fresh IV), stored as ciphertext.
const created = await contacts.create({ name: 'Grace Hopper', email: 'grace@example.com', phone: '+14155550123' });
console.log(`5. created contact ${created.id} (version ${created.version})`);

// 6. Receive its event and decrypt the ciphertext it carries.
const timeout = setTimeout(() => {
  console.error('no object_created event within 10 s');
  process.exit(1);
}, 10_000);
for await (const event of events) {
  if (event.data.id !== created.id) continue;
  const { value } = await contacts.openEvent(event);
  console.log(`6. received ${event.type} #${event.id}: ${JSON.stringify(value)}`);
  break; // leaving the loop closes the subscription
}
clearTimeout(timeout);

// 7. Read it back: the service holds only ciphertext; the SDK decrypts it.
const raw = await client.objects.get(created.id);
console.log(`7. stored ciphertext ${raw.content.slice(0, 32)}… (tag ${raw.auth_tag}, iv ${raw.iv})`);
const record = await contacts.get(created.id);
console.log(`   decrypted: ${JSON.stringify(record.value)}`);
if (record.value.name !== 'Grace Hopper') throw new Error('the decrypted contact does not match what was stored');
console.log('done');
