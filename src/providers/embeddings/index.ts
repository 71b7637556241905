// Picks the embeddings provider: an OpenAI-compatible endpoint when
// EMBEDDINGS_URL is set, otherwise none (knowledge search is full-text only).
import type { Config } from '../../config.js';
import type { EmbeddingsProvider } from './interface.js';
import { OpenAiEmbeddingsProvider } from './openai.js';

export function createEmbeddingsProvider(config: Pick<Config, 'embeddings'>): EmbeddingsProvider | null {
  return config.embeddings ? new OpenAiEmbeddingsProvider(config.embeddings) : null;
}
