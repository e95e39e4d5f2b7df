/** A plain SSE client over fetch: collects events until the server ends the stream. */
export async function readSse(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string | null; events: Array<{ id: string; event: string; data: any }> }> {
  const res = await fetch(url, { headers });
  const events: Array<{ id: string; event: string; data: any }> = [];
  if (!res.body) return { status: res.status, contentType: res.headers.get('content-type'), events };
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as any) {
    buffer += decoder.decode(chunk, { stream: true });
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const fields = Object.fromEntries(
        block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
      );
      if (fields.data) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
    }
  }
  return { status: res.status, contentType: res.headers.get('content-type'), events };
}
