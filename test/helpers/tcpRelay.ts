// A TCP relay to a real server that a test can cut: "the server went away" without stopping the shared stack.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpRelay {
  port: number;
  /** Closes the listener and every relayed connection: new connections are refused. */
  cut(): Promise<void>;
}

/** Relays 127.0.0.1:<listenPort or an ephemeral port> to target. Pass the old port to bring a cut relay back. */
export async function startTcpRelay(target: { host: string; port: number }, listenPort = 0): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
