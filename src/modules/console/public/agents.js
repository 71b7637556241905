// The records of the account's `agents` store, for the agent picker, opened in
// the browser (records.js) to show each agent's name. An agent whose record
// does not open here is still listed, by its id: the service reads the record
// itself when the call starts.
import { listStore } from './records.js';

/** Up to `limit` agents of the account: `{ id, name, knowledgeBaseId?, readable }`, oldest first. */
export async function listAgents(limit = 200) {
  const records = await listStore('agents', limit);
  return records.map(({ object, value: record }) => {
    if (record && typeof record.name === 'string' && record.name.trim()) {
      return {
        id: object.id,
        name: record.name.trim(),
        knowledgeBaseId: typeof record.knowledgeBaseId === 'string' ? record.knowledgeBaseId : undefined,
        readable: true,
      };
    }
    return { id: object.id, name: `Agent ${object.id.slice(0, 8)}…`, readable: false };
  });
}
