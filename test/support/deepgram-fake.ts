// A local server speaking Deepgram's live transcription protocol over a real
// WebSocket: GET /v1/listen upgraded after checking `Authorization: Token <key>`
// and the audio options (a wrong key is refused with HTTP 401 and a dg-error
// header, as Deepgram does). It decodes the μ-law it receives and listens to
// it: a stretch of loud frames followed by `endpointing` ms of quiet is an
// utterance, answered with interim `Results` while it lasts and a final one
// (is_final, speech_final) with the next scripted transcript; `Finalize`
// finalizes what is pending at once (from_finalize). A transcript is one
// sentence: speech resuming within 700 ms of a final is the rest of it, final
// with no words. `CloseStream` is answered
// with Metadata and a 1000 close. Tests can drop every socket (no close frame)
// or close them with a code, and read back everything each connection got.
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { mulawToPcm } from '../../src/lib/audio.js';

export interface DeepgramConnection {
  query: Record<string, string>;
  authorization: string | undefined;
  /** The μ-law bytes received, in order. */
  mulaw: number[];
  /** Sizes of the binary (audio) messages, in order. */
  audioMessages: number[];
  /** Control messages received (`KeepAlive`, `Finalize`, `CloseStream`), in order. */
  controls: string[];
  /** Every message sent back. */
  sent: Array<Record<string, unknown>>;
  socket: WebSocket;
}

export interface DeepgramFake {
  /** ws://127.0.0.1:port, for DEEPGRAM_API_BASE. */
  apiBase: string;
  apiKey: string;
  connections: DeepgramConnection[];
  /** Texts the next utterances are recognised as, in order (then "(unscripted)"). */
  transcripts: string[];
  /** Handshakes refused (wrong key or options). */
  refused: number;
  /** Milliseconds between the end of an utterance (endpointing) and its final result (a provider's recognition time; 0 by default). */
  resultDelayMs: number;
  /** Ends every open socket without a close frame (a network drop). */
  drop(): void;
  /** Closes every open socket with this code and reason (Deepgram's NET-/DATA- errors). */
  closeAll(code: number, reason: string): void;
  close(): Promise<void>;
}

const FRAME = 160;
/** A 20 ms frame louder than this (RMS) is speech. */
const SPEECH_RMS = 500;
/** Silence after which speech is a new sentence (a new scripted transcript), not the rest of the last one. */
const SENTENCE_GAP_MS = 700;

export async function startDeepgramFake(): Promise<DeepgramFake> {
  const apiKey = 'dg-test-key-0123456789abcdef';
  const connections: DeepgramConnection[] = [];
  const transcripts: string[] = [];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((_req, res) => {
    res.writeHead(404).end();
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const fake: DeepgramFake = {
    apiBase: '',
    apiKey,
    connections,
    transcripts,
    refused: 0,
    resultDelayMs: 0,
    drop: () => connections.forEach((c) => c.socket.readyState === WebSocket.OPEN && c.socket.terminate()),
    closeAll: (code, reason) =>
      connections.forEach((c) => c.socket.readyState === WebSocket.OPEN && c.socket.close(code, reason)),
    close: async () => {
      for (const c of connections) c.socket.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (status: number, error: string) => {
      fake.refused += 1;
      socket.end(`HTTP/1.1 ${status} Refused\r\ndg-error: ${error}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    };
    if (url.pathname !== '/v1/listen') return refuse(404, 'Not found');
    if (req.headers.authorization !== `Token ${apiKey}`) return refuse(401, 'Invalid credentials.');
    const query = Object.fromEntries(url.searchParams);
    if (query.encoding !== 'mulaw' || query.sample_rate !== '8000' || query.channels !== '1')
      return refuse(400, 'Bad audio options.');
    wss.handleUpgrade(req, socket, head, (ws) =>
      serve(ws, {
        query,
        authorization: req.headers.authorization,
        mulaw: [],
        audioMessages: [],
        controls: [],
        sent: [],
        socket: ws,
      }),
    );
  });

  function serve(ws: WebSocket, connection: DeepgramConnection): void {
    connections.push(connection);
    const endpointingSamples = (Number(connection.query.endpointing) || 10) * 8;
    let received = 0;
    let partial: number[] = [];
    let speechStart: number | null = null;
    let lastSpeech = 0;
    let framesSinceInterim = 0;
    // A scripted transcript is one spoken sentence, given whole at its first final. A pause inside the sentence
    // (a synthesized comma is 300 ms or more) ends an utterance too, by endpointing or by our VAD's Finalize:
    // speech resuming within SENTENCE_GAP_MS is the rest of that sentence, whose words were already sent, so
    // its finals are empty rather than the next script's.
    let restOfSentence = false;
    const send = (message: Record<string, unknown>) => {
      connection.sent.push(message);
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
    };
    const results = (text: string, startSample: number, endSample: number, flags: Record<string, boolean>) =>
      send({
        type: 'Results',
        channel_index: [0, 1],
        start: startSample / 8000,
        duration: (endSample - startSample) / 8000,
        ...flags,
        channel: {
          alternatives: [
            {
              transcript: text,
              confidence: 0.98,
              words: text
                ? text
                    .split(' ')
                    .map((word) => ({ word, start: startSample / 8000, end: endSample / 8000, confidence: 0.98 }))
                : [],
            },
          ],
        },
        metadata: { request_id: 'fake', model_info: { name: 'fake', version: '0', arch: 'fake' }, model_uuid: 'fake' },
      });
    /** Ends the pending utterance: its text (the next script's, or none for the rest of a sentence) and its span. */
    const takeUtterance = () => {
      const utterance = {
        text: restOfSentence ? '' : (transcripts.shift() ?? '(unscripted)'),
        start: speechStart!,
        end: lastSpeech,
      };
      speechStart = null;
      restOfSentence = true;
      return utterance;
    };
    const finishUtterance = (flags: Record<string, boolean>) => {
      const { text, start, end } = takeUtterance();
      results(text, start, end, { is_final: true, ...flags });
    };

    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        const type = String((JSON.parse(data.toString()) as { type?: unknown }).type);
        connection.controls.push(type);
        if (type === 'Finalize') {
          if (speechStart !== null) finishUtterance({ speech_final: false, from_finalize: true });
          else results('', received, received, { is_final: true, speech_final: false, from_finalize: true });
        } else if (type === 'CloseStream') {
          send({ type: 'Metadata', request_id: 'fake', duration: received / 8000, channels: 1 });
          ws.close(1000);
        }
        return;
      }
      const bytes = data as Buffer;
      connection.audioMessages.push(bytes.length);
      for (const b of bytes) connection.mulaw.push(b);
      partial.push(...mulawToPcm(bytes));
      while (partial.length >= FRAME) {
        const frame = partial.slice(0, FRAME);
        partial = partial.slice(FRAME);
        const rms = Math.sqrt(frame.reduce((sum, s) => sum + s * s, 0) / FRAME);
        const frameStart = received;
        received += FRAME;
        if (rms >= SPEECH_RMS) {
          if (speechStart === null) {
            speechStart = frameStart;
            framesSinceInterim = 0;
          }
          lastSpeech = received;
          // An interim hypothesis every 200 ms of speech: the first word of what will be recognised.
          if (++framesSinceInterim >= 10 && !restOfSentence) {
            framesSinceInterim = 0;
            results((transcripts[0] ?? '(unscripted)').split(' ')[0]!, speechStart, received, {
              is_final: false,
              speech_final: false,
            });
          }
        } else if (speechStart !== null && received - lastSpeech >= endpointingSamples) {
          if (fake.resultDelayMs > 0) {
            // The text is taken now, the answer sent later; speech starting meanwhile begins a new utterance.
            const { text, start, end } = takeUtterance();
            setTimeout(() => results(text, start, end, { is_final: true, speech_final: true }), fake.resultDelayMs);
          } else finishUtterance({ speech_final: true });
        } else if (speechStart === null && received - lastSpeech >= SENTENCE_GAP_MS * 8) restOfSentence = false;
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.apiBase = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
