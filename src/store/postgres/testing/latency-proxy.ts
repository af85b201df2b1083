import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to 127.0.0.1:`port` that holds every chunk for `delayMs` in each direction (a
 * database on another host, for tests and benchmarks). Order is kept: equal timers fire in
 * the order they were set. `close()` cuts every connection.
 */
export interface LatencyProxy {
  port: number;
  /** `url` with its port replaced by the proxy's. */
  via(url: string): string;
  close(): Promise<void>;
}

export function startLatencyProxy(port: number, delayMs: number): Promise<LatencyProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    const pipe = (from: Socket, to: Socket) => {
      from.on('data', (chunk) => {
        if (delayMs === 0) to.write(chunk);
        else setTimeout(() => to.writable && to.write(chunk), delayMs);
      });
      from.on('end', () => setTimeout(() => to.end(), delayMs));
    };
    pipe(client, upstream);
    pipe(upstream, client);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const own = (server.address() as { port: number }).port;
      resolve({
        port: own,
        via(url: string) {
          const parsed = new URL(url);
          parsed.port = String(own);
          return parsed.toString();
        },
        close() {
          for (const s of sockets) s.destroy();
          return new Promise((done) => server.close(() => done()));
        },
      });
    }),
  );
}
