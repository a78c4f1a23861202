import type { DestinationStream } from 'pino';

/**
 * Log lines for a person at a terminal: in development (NODE_ENV other than production) with stdout a TTY, pino-pretty
 * (colours, local time, one line per entry); everywhere else the JSON lines log collectors read. pino-pretty is a
 * development dependency: an install without them (npm ci --omit=dev, the Docker image) logs JSON.
 */
export async function terminalLogStream(env: NodeJS.ProcessEnv = process.env, stdout: { isTTY?: boolean } = process.stdout): Promise<DestinationStream | undefined> {
  if (stdout.isTTY !== true || env.NODE_ENV === 'production') return undefined;
  try {
    const { default: pretty } = await import('pino-pretty');
    // sync: a line is on the terminal before the next statement runs, as with JSON to stdout (nothing lost on exit).
    return pretty({ colorize: true, sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  } catch {
    return undefined;
  }
}
