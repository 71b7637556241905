// TypeBox schemas of knowledge bases (spec 2.14, 4.15).
import { Type } from 'typebox';

const id = '0193a5b2-7c1e-7d3f-9a41-5c2b8e6f1a20';
const at = '2026-11-23T10:00:00.000Z';

export const KnowledgeBaseParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'Knowledge base id' }),
});
export const DocumentParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'Knowledge base id' }),
  documentId: Type.Integer({ minimum: 1, description: 'Numeric document id' }),
});

const baseExample = {
  id,
  name: 'Support',
  description: 'Product manuals and FAQ',
  metadata: {},
  createdAt: at,
  updatedAt: at,
};
const documentExample = {
  id: 42,
  name: 'manual.pdf',
  mimeType: 'application/pdf',
  size: 183_204,
  source: 'upload',
  createdAt: at,
};

export const KnowledgeBase = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form metadata; created empty' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { description: 'A knowledge base', examples: [baseExample] },
);

export const KnowledgeDocument = Type.Object(
  {
    id: Type.Integer({ description: 'Numeric document id' }),
    name: Type.String({ description: 'File name, page title or URL; slices of a large text are named "name (2/3)"' }),
    mimeType: Type.String({ description: 'The type sniffed from the content' }),
    size: Type.Integer({ description: 'Bytes of the file, download or slice' }),
    source: Type.Union([Type.Literal('upload'), Type.Literal('link')]),
    url: Type.Optional(Type.String({ description: 'The crawled URL (links only)' })),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { description: 'A document of a knowledge base', examples: [documentExample] },
);

export const KnowledgeBaseWithDocuments = Type.Object(
  { ...KnowledgeBase.properties, documents: Type.Array(KnowledgeDocument) },
  { description: 'A knowledge base and its documents', examples: [{ ...baseExample, documents: [documentExample] }] },
);

export const KnowledgeBaseList = Type.Array(KnowledgeBase, {
  description: "The caller's knowledge bases, oldest first",
  examples: [[baseExample]],
});
export const DocumentList = Type.Array(KnowledgeDocument, {
  description: 'The created documents',
  examples: [[documentExample]],
});

export const CreateKnowledgeBaseBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), description: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false, examples: [{ name: 'Support', description: 'Product manuals and FAQ' }] },
);
export const UpdateKnowledgeBaseBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false, examples: [{ description: 'Product manuals, FAQ and release notes' }] },
);

export const UploadBody = Type.Object(
  { files: Type.Array(Type.String({ format: 'binary' }), { description: 'One part per file, each named "files"' }) },
  { description: 'multipart/form-data' },
);

export const LinksBody = Type.Object(
  {
    urls: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
      minItems: 1,
      maxItems: 100,
      description: 'http(s) URLs to crawl',
    }),
  },
  { additionalProperties: false, examples: [{ urls: ['https://example.com/pricing', 'https://example.com/faq'] }] },
);

export const LinksResult = Type.Object(
  {
    documents: Type.Array(KnowledgeDocument),
    skipped: Type.Array(Type.Object({ url: Type.String(), reason: Type.String() }), {
      description: 'URLs that could not be downloaded or read',
    }),
  },
  {
    description: 'Created documents and the skipped URLs',
    examples: [
      {
        documents: [
          {
            ...documentExample,
            name: 'Pricing',
            mimeType: 'text/html',
            source: 'link',
            url: 'https://example.com/pricing',
          },
        ],
        skipped: [
          {
            url: 'http://intranet.example/',
            reason: 'intranet.example resolves to 10.0.0.5, which is not a public address',
          },
        ],
      },
    ],
  },
);

export const SearchBody = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: 4000, description: 'The question or keywords' }) },
  { additionalProperties: false, examples: [{ text: 'How do I reset the device?' }] },
);

export const SearchMatches = Type.Array(
  Type.Object({
    score: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Higher is better; 1 means first in every retrieval list',
    }),
    text: Type.String({ description: 'The matching passage (about 1,000 characters)' }),
    document: Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      source: Type.Union([Type.Literal('upload'), Type.Literal('link')]),
      url: Type.Optional(Type.String()),
    }),
  }),
  {
    maxItems: 5,
    description: 'At most 5 matches, best first',
    examples: [
      [
        {
          score: 1,
          text: 'To reset the device, hold the power button for ten seconds…',
          document: { id: 42, name: 'manual.pdf', source: 'upload' },
        },
      ],
    ],
  },
);
