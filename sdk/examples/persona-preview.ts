// Persona preview: sign up, verify the phone through the sandbox outbox,
// register a server (its private key stays here), sign a preview request with
// it, let the built-in persona "Amy" speak, decrypt the answer and write a
// playable WAV file. Against a local server started with `npm start`:
//
//   npx tsx sdk/examples/persona-preview.ts
//
// BASE_URL overrides http://127.0.0.1:3000; OUT the file (persona-preview.wav);
// PERSONA the persona (local-amy); TEXT what is said.
import { writeFile } from 'node:fs/promises';
import { WorkspaceClient, decryptPersonaAudio, signPreviewRequest } from '../src/index.js';

const baseUrl = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const out = process.env.OUT ?? 'persona-preview.wav';
const personaId = process.env.PERSONA ?? 'local-amy';
const text = process.env.TEXT ?? 'Hello! This is a preview of my voice. Your meeting is booked for Tuesday at ten.';
const client = new WorkspaceClient({ baseUrl });

// 1–2. A fresh account with a verified phone (the preview is a data-plane route).
const unique = String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0');
const email = `persona.${Date.now()}.${unique}@example.com`;
const phone = `+1555${unique}`;
const password = 'correct horse battery staple';
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

// 2. Register a server: the service keeps the public key and answers the private key once.
const server = await client.servers.register({ name: `preview-${unique}`, mode: 'generate' });
if (!server.privateKey) throw new Error('mode generate answers a private key');
console.log(`2. registered server ${server.name}`);

// 3. Sign the preview request with the server's private key, nested in a JWE to the service key.
const persona = await client.personas.get(personaId);
const jwt = await signPreviewRequest({
  privateKey: server.privateKey,
  text,
  encryptTo: await client.servers.current(),
});
console.log(
  `3. signed a preview request for ${persona.name} (${persona.settings.type} voice ${persona.settings.voiceId})`,
);

// 4. The answer is encrypted to the server: only its private key opens it.
const answer = await client.personas.play(personaId, { server: server.name, jwt });
const audio = await decryptPersonaAudio(answer, server.privateKey);
await writeFile(out, audio.bytes);
console.log(`4. wrote ${out}: ${audio.contentType}, ${audio.bytes.length} bytes`);
console.log('done');
