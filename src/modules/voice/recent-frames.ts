// The caller's last frames, kept for replay into a reopened recognition
// stream. A frame arrives 50 times a second on every call: dropping the
// oldest with `splice(0, 1)` moved the whole buffer each time (250 frames at
// the default 5 s), so the dropped ones are skipped over and the array is
// compacted once per buffer's worth instead.

export class RecentFrames {
  private frames: Int16Array[] = [];
  /** Index of the oldest frame still kept. */
  private head = 0;

  constructor(private readonly capacity: number) {}

  /** Frames kept (at most `capacity`). */
  get length(): number {
    return this.frames.length - this.head;
  }

  push(frame: Int16Array): void {
    this.frames.push(frame);
    if (this.length <= this.capacity) return;
    this.head++;
    if (this.head >= this.capacity) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
  }

  /** The newest `count` frames kept, oldest first. */
  last(count: number): Int16Array[] {
    const n = Math.max(0, Math.min(count, this.length));
    return this.frames.slice(this.frames.length - n);
  }
}
