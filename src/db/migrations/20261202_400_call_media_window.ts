// When a call's media stream must have connected by (its media token's
// expiry: a session that never got a stream is ended by housekeeping soon
// after, and its hold returned), and the carrier's own final duration of a
// call whose stream was still carried when the carrier said it completed (so
// a call whose instance died is charged what the carrier says it lasted),
// and the instance whose in-process sandbox carrier holds a call before its
// stream connects (a call ringing there ends `instance_stopped` when that
// instance stops, as a carried one does; media_heartbeat_at is its heartbeat);
// and when a transfer leg was dialled.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('call_sessions').addColumn('media_deadline_at', 'bigint').execute();
  await db.schema.alterTable('call_sessions').addColumn('carrier_duration_seconds', 'integer').execute();
  await db.schema.alterTable('call_sessions').addColumn('carrier_instance', 'text').execute();
  // A transfer leg's charge: when the carrier took the redirect to <Dial> (a leg never dialled costs nothing, whatever the carrier did not report).
  await db.schema.alterTable('call_charges').addColumn('dialled_at', 'bigint').execute();
  await db.schema
    .createIndex('call_sessions_media_deadline')
    .on('call_sessions')
    .columns(['media_deadline_at'])
    .execute();
}
