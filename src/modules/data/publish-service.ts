// Publish associations (spec 2.9, 3.2): an object of the user published under
// a logical type and a relatedId. Unpublishing keeps the ciphertext.
import { notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { EventRecorder } from '../events/recorder.js';
import { iso } from '../../lib/time.js';
import type { DataStore } from './store.js';

export interface PublicationView {
  type: string;
  relatedId: string;
  objectId: string;
  publishedAt: string;
}

export class PublishService {
  constructor(
    private readonly store: DataStore,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}

  /** Publishes `objectId` under (type, relatedId), replacing whatever the user published there before. */
  async publish(userId: string, type: string, relatedId: string, objectId: string): Promise<PublicationView> {
    const now = this.clock.now();
    await this.store.transaction(async (tx) => {
      if (!(await tx.objects.find(userId, objectId))) throw notFound('object');
      await tx.publications.upsert({
        user_id: userId,
        type,
        related_id: relatedId,
        object_id: objectId,
        published_at: now,
      });
      await this.events.record(tx.db, [
        { userId, type: 'publish', payload: { type, related_id: relatedId, object_id: objectId, timestamp: iso(now) } },
      ]);
    });
    this.events.announce();
    return { type, relatedId, objectId, publishedAt: iso(now) };
  }

  /** Removes the association; 404 when nothing is published there. */
  async unpublish(userId: string, type: string, relatedId: string): Promise<void> {
    const now = this.clock.now();
    await this.store.transaction(async (tx) => {
      const removed = await tx.publications.delete(userId, type, relatedId);
      if (!removed) throw notFound('publication');
      await this.events.record(tx.db, [
        {
          userId,
          type: 'unpublish',
          payload: { type, related_id: relatedId, object_id: removed.object_id, timestamp: iso(now) },
        },
      ]);
    });
    this.events.announce();
  }

  /** What the user published under (type, relatedId), or null (for other modules). */
  async findPublished(userId: string, type: string, relatedId: string): Promise<PublicationView | null> {
    const row = await this.store.publications.find(userId, type, relatedId);
    return row
      ? { type: row.type, relatedId: row.related_id, objectId: row.object_id, publishedAt: iso(row.published_at) }
      : null;
  }
}
