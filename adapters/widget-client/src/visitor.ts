// The visitor's memory in this browser, per widget token: a random visitor id (the visitor's
// bearer secret towards the platform: whoever holds it continues their conversations) and the
// conversation they are in. Kept in localStorage so a reload or another page of the same site
// continues; in memory only when storage is refused (a sandboxed frame, blocked site data).

export interface VisitorMemory {
  visitor_id: string;
  conversation_id: string | null;
}

/** 18 random bytes as base64url: 24 characters, 144 bits (the platform wants 22 to 64 of A-Z a-z 0-9 _ -). */
export function newVisitorId(): string {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const VISITOR_ID = /^[A-Za-z0-9_-]{22,64}$/;

export class VisitorStore {
  private readonly key: string;
  private memory: VisitorMemory | null = null;

  constructor(token: string) {
    this.key = `svc-widget:${token}`;
  }

  load(): VisitorMemory {
    if (this.memory) return this.memory;
    let stored: Partial<VisitorMemory> | null = null;
    try {
      stored = JSON.parse(localStorage.getItem(this.key) ?? 'null') as Partial<VisitorMemory> | null;
    } catch {
      stored = null;
    }
    const visitorId = typeof stored?.visitor_id === 'string' && VISITOR_ID.test(stored.visitor_id) ? stored.visitor_id : newVisitorId();
    this.memory = { visitor_id: visitorId, conversation_id: typeof stored?.conversation_id === 'string' ? stored.conversation_id : null };
    this.save();
    return this.memory;
  }

  setConversation(conversationId: string | null): void {
    const memory = this.load();
    if (memory.conversation_id === conversationId) return;
    memory.conversation_id = conversationId;
    this.save();
  }

  private save(): void {
    try {
      localStorage.setItem(this.key, JSON.stringify(this.memory));
    } catch {
      // Storage refused: the visitor is remembered for this page only.
    }
  }
}
