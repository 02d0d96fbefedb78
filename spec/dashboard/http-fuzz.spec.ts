import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { exchange, type RawAnswer } from './raw-http';

/**
 * Random requests over raw TCP to the dashboard (whose `GET /metrics` is the Prometheus exposition), in a
 * child process: whatever arrives, the server must answer with a status line or close, and stay up.
 * `FUZZ_SEED=<n>` replays a run; a failure names its seed and the request.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 27);
const REQUESTS = 10_000;
/** Connections open at once. */
const CONCURRENCY = 48;
const ROOT = join(__dirname, '..', '..');

/** mulberry32: a small seeded generator, so a failing run can be replayed exactly. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Builds random requests as latin1 strings (one character, one byte). Most keep to what Node's parser
 * lets through, so that they reach the server's own code with odd targets, hosts and headers; the rest
 * break HTTP somewhere (method, target bytes, version, header syntax, sizes, framing).
 */
class Requests {
  private readonly next: () => number;

  constructor(
    seed: number,
    private readonly port: number,
  ) {
    this.next = random(seed);
  }

  request(): string {
    if (this.chance(0.02)) return `${this.text(this.int(1, 200), ALL_BYTES)}\r\n\r\n`; // not HTTP at all
    const odd = this.chance(0.35);
    const method = odd ? this.pick(ODD_METHODS) : this.pick(['GET', 'GET', 'GET', 'HEAD', 'POST']);
    const version = odd ? this.pick(VERSIONS) : this.pick([' HTTP/1.1', ' HTTP/1.1', ' HTTP/1.0']);
    const headers: string[] = [];
    let body = '';
    if (!this.chance(0.05)) headers.push(`Host: ${this.host()}`);
    for (let i = this.int(0, 4); i > 0; i--) {
      const roll = this.next();
      if (roll < 0.5) headers.push(this.pick(HEADERS));
      else if (roll < 0.6 && body === '') {
        const length = this.int(0, 8);
        headers.push(`Content-Length: ${length}`);
        body = this.text(length, ALL_BYTES);
      } else
        headers.push(
          `${this.text(this.int(1, 20), TOKEN_BYTES)}: ${this.text(this.int(0, 60), VALUE_BYTES)}`,
        );
    }
    if (odd) headers.push(this.oddHeader());
    const end = odd && this.chance(0.1) ? '\n' : '\r\n';
    return `${method} ${odd ? this.oddTarget() : this.target()}${version}\r\n${headers.map((h) => `${h}\r\n`).join('')}${end}${body}`;
  }

  private target(): string {
    return this.chance(0.5) ? this.pick(TARGETS) : `/${this.text(this.int(0, 40), PATH_BYTES)}`;
  }

  private oddTarget(): string {
    const roll = this.next();
    if (roll < 0.5) return this.target();
    if (roll < 0.7) return `/${this.text(this.int(1_000, 20_000), PATH_BYTES)}`; // very long
    // Raw non-ASCII and control bytes: Node's parser refuses them in a target.
    return `${this.pick(TARGETS)}${this.text(this.int(1, 10), ALL_BYTES)}`;
  }

  private oddHeader(): string {
    const roll = this.next();
    if (roll < 0.4) return this.pick(ODD_HEADERS);
    if (roll < 0.6) return `X-Big: ${'v'.repeat(this.int(8_000, 40_000))}`; // around Node's 16 KiB limit
    if (roll < 0.8)
      return `${this.text(this.int(1, 20), ALL_BYTES)}: ${this.text(this.int(0, 60), ALL_BYTES)}`;
    return this.text(this.int(1, 30), ALL_BYTES); // no colon, odd bytes
  }

  private host(): string {
    const roll = this.next();
    if (roll < 0.4) return `127.0.0.1:${this.port}`;
    if (roll < 0.8) return this.pick(HOSTS);
    return this.text(this.int(0, 40), VALUE_BYTES);
  }

  private chance(p: number): boolean {
    return this.next() < p;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  private pick<T>(from: readonly T[]): T {
    return from[Math.floor(this.next() * from.length)];
  }

  private text(length: number, bytes: string | readonly string[]): string {
    let text = '';
    for (let i = 0; i < length; i++) text += bytes[Math.floor(this.next() * bytes.length)];
    return text;
  }
}

const range = (from: number, to: number) =>
  String.fromCharCode(...Array.from({ length: to - from + 1 }, (_, i) => from + i));
const ALL_BYTES = range(0, 255);
const PRINTABLE = range(0x21, 0x7e);
/**
 * What Node's parser lets through in a target: printable ASCII, weighted to slashes, backslashes and
 * percent signs, and escapes (of UTF-8 text, of control bytes, broken ones).
 */
const PATH_BYTES = [
  ...PRINTABLE,
  ...'////\\\\%%%%',
  ...[
    '%C3%A9',
    '%E6%97%A5',
    '%F0%9F%99%82',
    '%00',
    '%0A',
    '%0D%0A',
    '%2F',
    '%5C',
    '%zz',
    '%',
    '%%',
    '%C0%AF',
  ],
];
/** The characters of a header name (a token). */
const TOKEN_BYTES = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** What a header value may hold: printable ASCII, tabs and bytes above 0x7f (non-ASCII text as latin1). */
const VALUE_BYTES = `${range(0x20, 0x7e)}${range(0x80, 0xff)}\x09`;

// Not `PRI`: it starts the HTTP/2 preface, whose rest Node's parser waits for (until `headersTimeout`).
const ODD_METHODS = [
  'GET',
  'HEAD',
  'PUT',
  'DELETE',
  'OPTIONS',
  'PATCH',
  'TRACE',
  'CONNECT',
  'get',
  'G3T',
  'GET\x00',
  '',
  'M-SEARCH',
  'PURGE',
  'X'.repeat(100),
];
const VERSIONS = [
  ' HTTP/1.1',
  ' HTTP/1.0',
  ' HTTP/2.0',
  ' HTTP/1.1 extra',
  '',
  ' HTTP/9.9',
  ' http/1.1',
  ' HTTP/1.',
];
const TARGETS = [
  '/',
  '/events',
  '/metrics',
  '/favicon.ico',
  '//',
  '///',
  '//%',
  '/\\',
  '%',
  '*',
  '/%',
  '/%%',
  '/%zz',
  '/%00',
  '/%C0%AE',
  '/?token=',
  '/?token=%',
  '/?token=t',
  '/metrics?token=t',
  '/events?token=t',
  '/metrics?token=t&token=u',
  'http://127.0.0.1/metrics',
  'http://[::1/',
  'https://x/',
  '//evil.example/metrics',
  '/\\evil.example',
  '/..',
  '/../..//',
  '?',
  '#',
  '/#frag',
  '/;a',
  'a',
  '',
  '/events/',
  '/METRICS',
  'example.com:443',
  '/%E6%97%A5',
  '/events?token=%F0%9F%99%82',
];
const HOSTS = [
  'localhost',
  'LOCALHOST:1',
  'attacker.example',
  '',
  '[',
  '[::1',
  '[::1]',
  '[::1]:',
  '[::1]x',
  ':',
  ':::',
  '127.0.0.1:99999999',
  '127.0.0.1:',
  '127.1',
  '0.0.0.0',
  '[::ffff:7f00:1]:80',
  'localhost.',
  '::1',
  `${'h'.repeat(300)}.example`,
  '127.0.0.1:80:80',
  ' 127.0.0.1',
  '127.0.0.1, attacker.example',
  '\u00e9.example',
];
const HEADERS = [
  'Connection: close',
  'Connection: keep-alive',
  'Connection: upgrade\r\nUpgrade: websocket',
  'Authorization: Bearer t',
  'Authorization: Bearer wrong',
  'Authorization: Bearer ',
  'Authorization: Bearer',
  'Authorization: Basic dDp0',
  `Authorization: Bearer ${'x'.repeat(10_000)}`,
  'Authorization: Bearer \u00e9',
  'Expect: 100-continue',
  'Accept: text/event-stream',
  'Cookie: a=b',
  'Origin: http://attacker.example',
  'X-Forwarded-Host: attacker.example',
  'Last-Event-ID: 7',
  'Transfer-Encoding: chunked',
];
/** Header lines Node's parser refuses, or framing it cannot agree with. */
const ODD_HEADERS = [
  'Content-Length: abc',
  'Content-Length: -1',
  'Content-Length: 0\r\nContent-Length: 1',
  ' folded: value',
  'Transfer-Encoding: chunked\r\nContent-Length: 3',
  'Host: a\x00b',
  'Bad Name: x',
  ': no name',
];

/** A failure worth reporting: what was sent and what came back. */
function describeCase(index: number, sent: string, answer: RawAnswer): string {
  const shown = (text: string) => JSON.stringify(text.length > 300 ? `${text.slice(0, 300)}…` : text);
  return `request #${index} (FUZZ_SEED=${SEED}): sent ${shown(sent)}, got ${shown(answer.text)}${answer.timedOut ? ' (timed out)' : ''}`;
}

interface Server {
  readonly child: ChildProcess;
  readonly ports: number[];
  stderr(): string;
}

/** Starts the fuzz server process and resolves once it listens (bounded). */
function startServer(timeoutMs = 30_000): Promise<Server> {
  const child = fork(join(__dirname, 'fuzz-server.ts'), [], {
    cwd: ROOT,
    execArgv: ['--require', 'tsx/cjs'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  child.stdout?.resume();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the fuzz server did not start: ${stderr}`)), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the fuzz server exited (${code ?? signal}) before listening: ${stderr}`));
    });
    child.once('message', (message: { ports: number[] }) => {
      clearTimeout(timer);
      resolve({ child, ports: message.ports, stderr: () => stderr });
    });
  });
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

describe('the dashboard and its Prometheus endpoint under random requests', () => {
  let server: Server | null = null;
  afterAll(() => {
    if (server !== null && alive(server.child)) server.child.kill('SIGKILL');
  });

  it('answers every request with a status line or a close, and stays up', async () => {
    server = await startServer();
    const { child, ports } = server;
    const generators = ports.map((port, i) => new Requests(SEED + i, port));
    const failures: string[] = [];
    let answered = 0;
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS && alive(child) && failures.length < 5) {
        const index = next++;
        const which = index % ports.length;
        const sent = generators[which].request();
        const answer = await exchange(ports[which], sent, { timeoutMs: 5000 });
        if (answer.text !== '') answered++;
        // Node's own parser may answer 400/431 and close, or close at once: both are answers.
        if (answer.timedOut || (answer.text !== '' && answer.status === 0)) {
          failures.push(describeCase(index, sent, answer));
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    if (!alive(child)) {
      throw new Error(
        `the server process died (FUZZ_SEED=${SEED}, near request #${next}): ${server.stderr().slice(-2000)}`,
      );
    }
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(REQUESTS / 2);
    // Still serving as before.
    const [open, guarded] = ports;
    const get = (port: number, path: string, extra = '') =>
      exchange(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}Connection: close\r\n\r\n`);
    expect((await get(open, '/')).status).toBe(200);
    expect((await get(open, '/metrics')).status).toBe(200);
    expect((await get(guarded, '/metrics', 'Authorization: Bearer t\r\n')).status).toBe(200);
    expect((await get(guarded, '/metrics')).status).toBe(401);
  }, 60_000);
});
