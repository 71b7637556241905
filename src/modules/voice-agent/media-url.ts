// Where a carrier or a browser opens a call's media WebSocket.

/** The WebSocket origin of PUBLIC_URL: http → ws, https → wss. */
export function mediaStreamUrl(publicUrl: string, path: string): string {
  const url = new URL(path, publicUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
