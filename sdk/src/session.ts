// Where the client keeps its session token. The storage is the Web Storage
// subset (getItem/setItem/removeItem), so a browser's localStorage or
// sessionStorage plugs in as is, and a host with other storage (a keychain,
// a file) writes a three-method adapter. Changes are announced to listeners,
// e.g. to update the UI when a sign-in, a refresh or logout replaces the token.

/** Synchronous key-value storage: `localStorage`, `sessionStorage`, or your own adapter. */
export interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export type TokenListener = (token: string | null) => void;

export const DEFAULT_STORAGE_KEY = 'workspace-api.token';

/** Keeps the token in this object only: it is gone when the process or page ends. */
export function memoryStorage(): TokenStorage {
  const values = new Map<string, string>();
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => void values.set(key, value),
    removeItem: (key) => void values.delete(key),
  };
}

/** The browser's localStorage when there is one (it survives reloads), memory otherwise (Node, workers). */
export function defaultTokenStorage(): TokenStorage {
  try {
    const storage = (globalThis as { localStorage?: TokenStorage }).localStorage;
    if (storage && typeof storage.getItem === 'function') return storage;
  } catch {
    /* localStorage access throws in some sandboxed frames: fall back to memory */
  }
  return memoryStorage();
}

/** The current token, read from and written to storage, with change listeners. */
export class SessionState {
  private current: string | null;
  private readonly listeners = new Set<TokenListener>();

  constructor(
    private readonly storage: TokenStorage,
    private readonly key: string,
    /** A token given to the constructor is used without being stored (an API key should not land in localStorage). */
    initial: string | null | undefined,
  ) {
    this.current = initial ?? this.storage.getItem(this.key);
  }

  get token(): string | null {
    return this.current;
  }

  set token(value: string | null) {
    if (value === this.current) return;
    this.current = value;
    if (value === null) this.storage.removeItem(this.key);
    else this.storage.setItem(this.key, value);
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        /* a failing listener must not break the call that changed the token */
      }
    }
  }

  /** Calls `listener` with the new token (null after logout) whenever it changes; returns a function that stops it. */
  onChange(listener: TokenListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}
