// Restarts the driver's server monitoring when a heartbeat check never ends. The MongoDB driver (6.22) can lose a
// check for good: when a server closes every connection at once, a pooled operation's network error wakes the monitor
// while the monitor's own socket is already destroyed but has not yet emitted 'close'; its `hello` write returns false
// and the monitor waits for a 'drain' that a destroyed socket never emits. No socket timeout fires on a destroyed
// socket, the monitor runs no further check, and the server stays Unknown with its last error ("read ECONNRESET")
// until the process restarts, although the server is back. Each check is bounded by the driver (connect and handshake
// or the `hello` each within connectTimeoutMS, an awaited `hello` within heartbeatFrequencyMS more), so a check far
// past that bound is the lost one: closing and reconnecting the client gives it a new topology and new monitors.
import type {
  MongoClient,
  ServerHeartbeatFailedEvent,
  ServerHeartbeatStartedEvent,
  ServerHeartbeatSucceededEvent,
} from 'mongodb';

export interface MonitorWatchdog {
  /** Stops watching (before the client is closed for good). */
  stop(): void;
}

export interface MonitorWatchdogOptions {
  /** The client's connectTimeoutMS: each step of a check is bounded by it. */
  timeoutMs: number;
  heartbeatFrequencyMs: number;
  /** Told when a lost check made the watchdog restart the client, and whether the reconnection succeeded. */
  onRestart?: (outcome: { address: string; checkRunningMs: number; reconnected: boolean; error?: string }) => void;
}

export function watchServerMonitoring(client: MongoClient, options: MonitorWatchdogOptions): MonitorWatchdog {
  // Twice the connect timeout (connect, then handshake) plus an awaited hello's wait, and one timeout more of slack
  // for a loaded event loop: a check running longer than this will never end.
  const lostAfterMs = 3 * options.timeoutMs + options.heartbeatFrequencyMs;
  /** When each server's running check started, by address. */
  const checksStartedAt = new Map<string, number>();
  let restarting = false;
  /** A reconnection that failed (the server was still down) is retried at the next tick. */
  let reconnectPending = false;
  /** Set by stop(): a restart under way then leaves the client closed instead of connecting it again. */
  let stopped = false;

  const onStarted = (event: ServerHeartbeatStartedEvent) => checksStartedAt.set(event.connectionId, Date.now());
  const onEnded = (event: ServerHeartbeatSucceededEvent | ServerHeartbeatFailedEvent) =>
    checksStartedAt.delete(event.connectionId);
  client.on('serverHeartbeatStarted', onStarted);
  client.on('serverHeartbeatSucceeded', onEnded);
  client.on('serverHeartbeatFailed', onEnded);

  const restart = async (address: string, checkRunningMs: number) => {
    restarting = true;
    checksStartedAt.clear();
    try {
      await client.close();
      if (stopped) return;
      await client.connect();
      reconnectPending = false;
      options.onRestart?.({ address, checkRunningMs, reconnected: true });
    } catch (error) {
      reconnectPending = true;
      options.onRestart?.({
        address,
        checkRunningMs,
        reconnected: false,
        error: error instanceof Error ? error.message : String(error),
      });
    } finally {
      restarting = false;
    }
  };

  const timer = setInterval(() => {
    if (restarting) return;
    if (reconnectPending) {
      void restart('(reconnection retry)', 0);
      return;
    }
    const now = Date.now();
    for (const [address, startedAt] of checksStartedAt) {
      if (now - startedAt > lostAfterMs) {
        void restart(address, now - startedAt);
        return;
      }
    }
  }, options.timeoutMs);
  // The watchdog never keeps a process alive on its own.
  timer.unref();

  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
      client.off('serverHeartbeatStarted', onStarted);
      client.off('serverHeartbeatSucceeded', onEnded);
      client.off('serverHeartbeatFailed', onEnded);
    },
  };
}
