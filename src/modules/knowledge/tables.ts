// Tables of knowledge bases (spec 2.14, 4.15).
import type { Generated } from 'kysely';

export interface KnowledgeBasesTable {
  id: string;
  user_id: string;
  name: string;
  description: string;
  /** JSON object text; created empty. */
  metadata: string;
  created_at: number;
  updated_at: number;
  /** Raised by every write of the base's chunks (migration 130): in-memory search indexes compare it. */
  index_version?: number;
}

export type DocumentSource = 'upload' | 'link';

export interface KnowledgeDocumentsTable {
  id: Generated<number>;
  knowledge_base_id: string;
  name: string;
  mime_type: string;
  size: number;
  source: DocumentSource;
  url: string | null;
  created_at: number;
}

/** A passage of a document: the unit search returns. */
export interface KnowledgeChunksTable {
  id: Generated<number>;
  document_id: number;
  knowledge_base_id: string;
  position: number;
  /** The document's name, indexed with a higher weight than the text. */
  title: string;
  text: string;
  /** Unit-length embedding: float32 BLOB (SQLite) or real[] (PostgreSQL); null without an embeddings provider. */
  embedding: Buffer | number[] | null;
}

export interface KnowledgeTables {
  knowledge_bases: KnowledgeBasesTable;
  knowledge_documents: KnowledgeDocumentsTable;
  knowledge_chunks: KnowledgeChunksTable;
}
