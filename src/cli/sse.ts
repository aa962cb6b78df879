/** One server-sent event: its `id:` and `data:` lines (either may be absent, e.g. in a heartbeat). */
export interface ServerSentEvent {
  id?: string;
  data?: string;
}

/**
 * Splits a `text/event-stream` body into events (blocks separated by a blank line). Ends when the body
 * ends; an aborted fetch throws from the iteration, for the caller to tell from a real error.
 */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of body) {
    text += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const id = /^id: ?(.*)$/m.exec(block)?.[1];
      const data = /^data: ?(.*)$/m.exec(block)?.[1];
      yield { ...(id !== undefined ? { id } : {}), ...(data !== undefined ? { data } : {}) };
    }
  }
}
