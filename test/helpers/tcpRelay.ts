// A TCP relay to a real server that a test can cut: "the server went away" without stopping the shared stack.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpRelay {
  port: number;
  /**
   * Drops every relayed connection and closes each new one as soon as it is accepted. The listener stays: a released
   * port is free for any other socket on the machine (another test's server, or an ephemeral port the kernel hands
   * out), and the relay could not come back on it.
   */
  cut(): void;
  /** Relays new connections again, on the same port. */
  restore(): void;
  /** Releases the port and drops every connection. */
  close(): Promise<void>;
}

/** Relays 127.0.0.1:<ephemeral port> to target. */
export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let relaying = true;
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  const server = createServer((client) => {
    if (!relaying) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    // Either side failing ends both: a half-open pair would leave a client waiting on a reply that never comes. An
    // orderly close ends the peer after what it still has to send.
    for (const [socket, peer] of [
      [client, upstream],
      [upstream, client],
    ]) {
      socket.on('error', () => socket.destroy());
      socket.on('close', (hadError) => (hadError ? peer.destroy() : peer.end()));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      relaying = false;
      dropAll();
    },
    restore: () => {
      relaying = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        dropAll();
      }),
  };
}
