#!/usr/bin/env node
// `node scripts/console-demo.mjs [base URL]`: an account to try the console
// with, on a server running in sandbox mode (`npm start` without provider
// keys). Through the public API only, as a newcomer would with curl: signs up,
// verifies the phone with the code from the sandbox outbox, creates a
// knowledge base with the clinic's opening hours and an agent "Amy" that uses
// it (encrypted into the agents store with the store's key, as the SDK does),
// then prints where to sign in. Plain JavaScript: nothing to compile.
import { createCipheriv, randomBytes, randomInt } from 'node:crypto';

const base = (process.argv[2] ?? process.env.BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');

async function call(method, path, { token, json, form } = {}) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  if (json !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(base + path, { method, headers, body: json !== undefined ? JSON.stringify(json) : form });
  } catch (error) {
    throw new Error(
      `${base} does not answer (${error.cause?.code ?? error.message}): start the server first with npm start`,
    );
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

async function main() {
  const email = `demo-${randomBytes(4).toString('hex')}@example.com`;
  const password = `demo-${randomBytes(9).toString('base64url')}`;
  const phone = `+1415555${String(randomInt(10_000)).padStart(4, '0')}`;

  let { token } = await call('POST', '/api/auth/register', {
    json: { firstName: 'Demo', lastName: 'Builder', email, phone, password, confirmPassword: password },
  });
  await call('POST', '/api/auth/verify/request', { token });
  const [sms] = await call('GET', `/api/sandbox/outbox?to=${encodeURIComponent(phone)}`).catch(() => []);
  if (!sms?.data?.code)
    throw new Error(
      'no verification code in the sandbox outbox: this needs a server in sandbox mode (no SMS provider keys, NODE_ENV not production)',
    );
  ({ token } = await call('POST', '/api/auth/verify/submit', { token, json: { code: sms.data.code } }));

  const knowledgeBase = await call('PUT', '/api/knowledge-bases', { token, json: { name: 'Clinic' } });
  const files = new FormData();
  files.append(
    'files',
    new Blob(
      [
        'Opening hours: we are open Monday to Friday from nine to five. We are closed on weekends.\n\nAddress: 12 High Street.',
      ],
      { type: 'text/plain' },
    ),
    'clinic.txt',
  );
  await call('POST', `/api/knowledge-bases/${knowledgeBase.id}`, { token, form: files });

  // The agent record, encrypted with the agents store's key (AES-256-GCM, a fresh IV).
  const root = await call('GET', '/api/root', { token });
  const store = root.stores.agents;
  const { key } = await call('GET', `/api/keys/${store.keyId}`, { token });
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(key, 'hex'), iv);
  const record = {
    name: 'Amy',
    prompt:
      'You are Amy, the receptionist of the clinic. Answer questions about the clinic from its knowledge base, briefly.',
    firstMessage: 'Hello, this is Amy from the clinic. How can I help?',
    knowledgeBaseId: knowledgeBase.id,
  };
  const content = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()]);
  const agent = await call('PUT', '/api/objects', {
    token,
    json: {
      keyId: store.keyId,
      content: content.toString('base64'),
      authTag: cipher.getAuthTag().toString('base64'),
      iv: iv.toString('base64'),
      relatedId: store.id,
    },
  });

  console.log(`Open ${base}/console and sign in:
    email     ${email}
    password  ${password}
  Agent "Amy" (${agent.id}) answers from the knowledge base "Clinic" (${knowledgeBase.id}).
  Press Call, allow the microphone, and ask "What are your opening hours?".`);
}

main().catch((error) => {
  console.error(`console-demo: ${error.message}`);
  process.exit(1);
});
