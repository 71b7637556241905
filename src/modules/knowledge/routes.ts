// Knowledge bases (spec 4.15); every route needs a phone-verified user.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../http/errors.js';
import { errorResponses, errorWith, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { createValidatorCompiler } from '../../http/validation.js';
import type { KnowledgeService } from './service.js';
import {
  CreateKnowledgeBaseBody,
  DocumentList,
  DocumentParams,
  KnowledgeBase,
  KnowledgeBaseList,
  KnowledgeBaseParams,
  KnowledgeBaseWithDocuments,
  LinksBody,
  LinksResult,
  SearchBody,
  SearchMatches,
  UpdateKnowledgeBaseBody,
  UploadBody,
} from './schemas.js';
import type { UploadedFile } from './service.js';
import { docs, uploadDocs } from './routes.docs.js';

const tags = ['knowledge'];
const deleted = Type.Null({ description: 'Deleted' });

/** What the knowledge routes touch: the service, and the upload limits they check while reading files. */
export interface KnowledgeRouteDeps {
  knowledge: KnowledgeService;
  limits: { maxFiles: number; maxFileBytes: number };
}

export async function knowledgeRoutes(app: App, deps: KnowledgeRouteDeps) {
  const { knowledge, limits } = deps;

  app.get(
    '/api/knowledge-bases',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.listKnowledgeBases,
        response: { 200: ok(KnowledgeBaseList, 'Your knowledge bases, oldest first') },
      },
    },
    async (request) => knowledge.list(request.auth!.userId),
  );

  app.put(
    '/api/knowledge-bases',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.createKnowledgeBase,
        body: CreateKnowledgeBaseBody,
        response: { 200: ok(KnowledgeBase, 'The new, empty knowledge base') },
      },
    },
    async (request) => knowledge.create(request.auth!.userId, request.body),
  );

  app.get(
    '/api/knowledge-bases/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.getKnowledgeBase,
        params: KnowledgeBaseParams,
        response: {
          200: ok(KnowledgeBaseWithDocuments, 'The knowledge base and its documents'),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => knowledge.get(request.auth!.userId, request.params.id),
  );

  app.patch(
    '/api/knowledge-bases/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.updateKnowledgeBase,
        params: KnowledgeBaseParams,
        body: UpdateKnowledgeBaseBody,
        response: { 200: ok(KnowledgeBase, 'The updated knowledge base'), ...errorResponses('not_found') },
      },
    },
    async (request) => knowledge.update(request.auth!.userId, request.params.id, request.body),
  );

  app.delete(
    '/api/knowledge-bases/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.deleteKnowledgeBase,
        params: KnowledgeBaseParams,
        response: { 204: deleted, ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      await knowledge.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  // Multipart parsing only where uploads are accepted.
  await app.register(async (plugin) => {
    await plugin.register(multipart);
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    const validators = createValidatorCompiler(() => app.getSchemas());
    scope.post(
      '/api/knowledge-bases/:id',
      {
        config: { auth: 'verified' },
        // The multipart body is read as a stream below; its schema documents it.
        validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validators(route)),
        schema: {
          tags,
          ...uploadDocs(limits),
          consumes: ['multipart/form-data'],
          params: KnowledgeBaseParams,
          body: UploadBody,
          response: {
            200: ok(DocumentList, 'The documents created from the files, in upload order'),
            ...errorResponses(
              'invalid_input',
              'not_found',
              errorWith('payload_too_large', {
                file: { schema: { type: 'string', description: 'The file that was refused' }, example: 'handbook.pdf' },
              }),
              'quota_exceeded',
              'unsupported_media_type',
              errorWith('file_too_complex', {
                file: { schema: { type: 'string', description: 'The file that was refused' }, example: 'handbook.pdf' },
              }),
              'provider_error',
            ),
          },
        },
      },
      async (request) => {
        if (!request.isMultipart())
          throw new AppError('unsupported_media_type', 'send multipart/form-data with file parts named "files"');
        return knowledge.addFiles(request.auth!.userId, request.params.id, uploadedFiles(request, limits));
      },
    );
  });

  app.post(
    '/api/knowledge-bases/:id/links',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.crawlKnowledgeLinks,
        params: KnowledgeBaseParams,
        body: LinksBody,
        response: {
          200: ok(LinksResult, 'The documents created and the URLs skipped'),
          ...errorResponses('not_found', 'quota_exceeded', 'provider_error'),
        },
      },
    },
    async (request) => knowledge.addLinks(request.auth!.userId, request.params.id, request.body.urls),
  );

  app.post(
    '/api/knowledge-bases/:id/search',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.searchKnowledgeBase,
        params: KnowledgeBaseParams,
        body: SearchBody,
        response: { 200: ok(SearchMatches, 'At most 5 passages, best first'), ...errorResponses('not_found') },
      },
    },
    async (request) => knowledge.search(request.auth!.userId, request.params.id, request.body.text),
  );

  app.delete(
    '/api/knowledge-bases/:id/:documentId',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.deleteKnowledgeDocument,
        params: DocumentParams,
        response: { 204: deleted, ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      await knowledge.deleteDocument(request.auth!.userId, request.params.id, request.params.documentId);
      return reply.status(204).send(null);
    },
  );
}

/** The request's file parts, with multipart limit errors turned into answers that name the limit and the file. */
async function* uploadedFiles(
  request: FastifyRequest,
  limits: { maxFiles: number; maxFileBytes: number },
): AsyncGenerator<UploadedFile> {
  const parts = request.parts({
    limits: { files: limits.maxFiles, fileSize: limits.maxFileBytes, fields: 20, parts: limits.maxFiles + 20 },
  });
  try {
    for await (const part of parts) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== 'files')
        throw new AppError('invalid_input', `unexpected file part "${part.fieldname}": name every file part "files"`);
      const file = part as MultipartFile;
      yield {
        filename: file.filename,
        mimetype: file.mimetype,
        read: () => file.toBuffer().catch((error: unknown) => Promise.reject(limitError(error, file.filename, limits))),
      };
    }
  } catch (error) {
    throw limitError(error, undefined, limits);
  }
}

function limitError(
  error: unknown,
  filename: string | undefined,
  limits: { maxFiles: number; maxFileBytes: number },
): unknown {
  const code = (error as { code?: string })?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE')
    return new AppError(
      'payload_too_large',
      `${filename ?? 'a file'} is larger than ${limits.maxFileBytes} bytes; nothing was added`,
      filename ? { file: filename } : undefined,
    );
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT')
    return new AppError('payload_too_large', `at most ${limits.maxFiles} files per upload; nothing was added`);
  if (code === 'FST_FIELDS_LIMIT') return new AppError('invalid_input', 'too many form fields');
  return error;
}
