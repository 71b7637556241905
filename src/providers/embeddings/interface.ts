// Text embeddings for knowledge search. Optional: without one, search is
// full-text only (no model weights are ever downloaded at run time).
export interface EmbeddingsProvider {
  readonly name: string;
  /** One unit-length vector per input text, in order. */
  embed(texts: string[]): Promise<number[][]>;
  /** Releases pooled connections. */
  close?(): Promise<void>;
}

/** Scales a vector to length 1, so cosine similarity is a dot product. */
export function unitVector(values: number[]): number[] {
  let sum = 0;
  for (const v of values) sum += v * v;
  const norm = Math.sqrt(sum);
  return norm > 0 ? values.map((v) => v / norm) : values;
}
