// The built-in voice agent (DESIGN.md "Voice agent"): what a call session
// needs when its media stream connects on any instance (the assembled call,
// sealed with the master key: it holds the prompt and the contact), when it
// was answered, which instance carries its audio and when that instance last
// said so (a silent one has stopped: its calls end `instance_stopped`), and
// what answered (a person or a machine), and why it ended.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('call_sessions').addColumn('assembled', 'text').execute();
  await db.schema.alterTable('call_sessions').addColumn('answered_at', 'bigint').execute();
  await db.schema.alterTable('call_sessions').addColumn('media_instance', 'text').execute();
  await db.schema.alterTable('call_sessions').addColumn('media_heartbeat_at', 'bigint').execute();
  /** Twilio's answering-machine verdict (AnsweredBy), for whichever instance carries the media. */
  await db.schema.alterTable('call_sessions').addColumn('answered_by', 'text').execute();
  await db.schema.alterTable('call_sessions').addColumn('outcome', 'text').execute();
  await db.schema.alterTable('call_sessions').addColumn('reason', 'text').execute();
  await db.schema
    .createIndex('call_sessions_media')
    .on('call_sessions')
    .columns(['media_instance', 'media_heartbeat_at'])
    .execute();
}
