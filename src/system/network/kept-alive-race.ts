// A server's keep-alive timeout racing the next request: the kept-alive connection it closed is reset as a request
// goes out on it, before any answer (node's docs, "reusedSocket"). A GET or HEAD is then safe to send once more, on a
// new connection; once the answer began, node reports a reset on the response, never on the request. The CLI's own
// fetches (remote-objects.ts), the metering proxy and the emulated job each send such a request again, once.
import type http from 'node:http';

/** Whether `error` on `req` is that race: a reset on a reused connection, before any answer. */
export function lostToKeepAlive(req: http.ClientRequest, error: NodeJS.ErrnoException): boolean {
  return req.reusedSocket && error.code === 'ECONNRESET';
}
