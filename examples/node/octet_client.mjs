#!/usr/bin/env node
// A minimal protocol-1 client for octet-host in plain Node.js (>= 20, ESM,
// no dependencies). It does what every client of the host must do:
//
//   - start the host in its own process group (detached), so that one
//     signal reaches the host and every command it runs;
//   - drain stderr separately (bounded) and never parse it;
//   - read stdout line by line, each line at most 1 MiB, one JSON object;
//   - check every event: protocol_version 1, a request_id it sent, seq 1, 2,
//     3, … per request, nothing after the request's one terminal event, the
//     run's run_id on run events;
//   - send hello and validate it before any work, then send a run;
//   - cancel by signalling the process group (SIGTERM, then SIGKILL after a
//     grace): protocol 1 has no in-band abort.
//
// Usage:
//
//   node octet_client.mjs --host PATH --workspace DIR --model ID --prompt TEXT
//       [--provider NAME --base-url URL --provider-mode MODE] [--session-dir DIR]
//       [--cancel-after-ms N] [--timeout-ms N]
//
// --cancel-after-ms cancels the run N ms after it started, as Ctrl-C does.
//
// The API key of an inline route is read from the environment variable
// OCTET_API_KEY, never from the command line. The answer's text streams to
// stdout; the last line is "final: status=S code=C". Exit status: 0 for a
// completed run, 1 for any other final status, 2 for bad usage, 3 when the
// host broke the protocol or did not answer in time.

import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

const MAX_FRAME = 1048576; // bytes per frame, newline included
const STDERR_TAIL = 4096; // bytes of stderr kept for diagnostics
const TERMINAL = new Set(['hello', 'models', 'shutdown', 'final_result', 'protocol_error']);

/** @typedef {{protocol_version: number, request_id: string|null, seq: number, type: string, run_id?: string, session_id?: string, data: Record<string, any>}} Event */

/** An error that means the host did not follow the protocol. */
class ProtocolViolation extends Error {}

class Host {
  /**
   * @param {string} path
   * @param {string[]} args
   */
  constructor(path, args) {
    // detached: the child calls setsid, so its pid is also its process
    // group's id and process.kill(-pid) signals the whole group.
    this.child = spawn(path, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.pid = this.child.pid;
    this.stderrTail = '';
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (s) => { this.stderrTail = (this.stderrTail + s).slice(-STDERR_TAIL); });
    /** @type {Map<string, {seq: number, done: boolean, runId?: string, sessionId?: string}>} */
    this.requests = new Map();
    /** @type {(Event|Error)[]} */
    this.queue = [];
    /** @type {((v: Event|Error) => void) | null} */
    this.waiter = null;
    this.hasExited = false;
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => { this.hasExited = true; resolve({ code, signal }); }));
    this.child.on('error', (err) => this.push(err));
    this.child.stdin.on('error', () => {}); // a host that exited: its answer, or its absence, tells
    this.readLines();
    // Never leave the host behind, whatever way this process ends.
    process.on('exit', () => { if (!this.hasExited) this.killGroup('SIGKILL'); });
  }

  /** Splits stdout into lines of at most MAX_FRAME bytes. */
  readLines() {
    /** @type {Buffer[]} */
    let parts = [];
    let size = 0;
    this.child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
        parts.push(chunk.subarray(start, nl));
        size += nl - start + 1;
        if (size > MAX_FRAME) return this.push(new ProtocolViolation(`an event line of ${size} bytes exceeds 1 MiB`));
        this.onLine(Buffer.concat(parts).toString('utf8'));
        parts = [];
        size = 0;
        start = nl + 1;
      }
      parts.push(chunk.subarray(start));
      size += chunk.length - start;
      if (size > MAX_FRAME) this.push(new ProtocolViolation('an event line exceeds 1 MiB'));
    });
    this.child.stdout.on('end', () => this.push(new ProtocolViolation('the host closed stdout')));
  }

  /** @param {string} line */
  onLine(line) {
    /** @type {Event} */
    let ev;
    try {
      ev = JSON.parse(line);
    } catch {
      return this.push(new ProtocolViolation(`not JSON: ${line.slice(0, 200)}`));
    }
    this.push(this.check(ev) ?? ev);
  }

  /**
   * Checks one event against the protocol; returns the violation, if any.
   * @param {Event} ev
   * @returns {ProtocolViolation | undefined}
   */
  check(ev) {
    if (ev === null || typeof ev !== 'object' || Array.isArray(ev)) return new ProtocolViolation('an event is not an object');
    if (ev.protocol_version !== 1) return new ProtocolViolation(`protocol_version ${ev.protocol_version}, not 1`);
    const req = typeof ev.request_id === 'string' ? this.requests.get(ev.request_id) : undefined;
    if (!req) return new ProtocolViolation(`an event for request_id ${JSON.stringify(ev.request_id)}, which this client did not send`);
    if (req.done) return new ProtocolViolation(`an event for ${ev.request_id} after its terminal event`);
    if (ev.seq !== req.seq + 1) return new ProtocolViolation(`seq ${ev.seq} after seq ${req.seq} for ${ev.request_id}`);
    req.seq = ev.seq;
    if (req.runId !== undefined && ev.type !== 'protocol_error') {
      if (ev.run_id !== req.runId) return new ProtocolViolation(`run event without run_id ${req.runId}`);
      if (req.sessionId !== undefined && ev.session_id !== req.sessionId) return new ProtocolViolation(`run event without session_id ${req.sessionId}`);
    }
    if (TERMINAL.has(ev.type)) req.done = true;
    return undefined;
  }

  /** @param {Event|Error} v */
  push(v) {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(v);
    } else {
      this.queue.push(v);
    }
  }

  /**
   * The next event; throws on a violation or after timeoutMs.
   * @param {number} timeoutMs
   * @returns {Promise<Event>}
   */
  async next(timeoutMs) {
    const v = this.queue.length > 0 ? this.queue.shift() : await new Promise((resolve) => {
      const t = setTimeout(() => { this.waiter = null; resolve(new ProtocolViolation(`no event within ${timeoutMs} ms`)); }, timeoutMs);
      this.waiter = (x) => { clearTimeout(t); resolve(x); };
    });
    if (v instanceof Error) throw v;
    return /** @type {Event} */ (v);
  }

  /**
   * Sends one request (one line).
   * @param {Record<string, any>} req
   */
  send(req) {
    this.requests.set(req.request_id, { seq: 0, done: false, runId: req.run_id, sessionId: req.session_id });
    this.child.stdin.write(JSON.stringify({ protocol_version: 1, ...req }) + '\n');
  }

  /** @param {NodeJS.Signals} sig */
  killGroup(sig) {
    try { process.kill(-this.pid, sig); } catch { /* the group is gone */ }
  }

  /**
   * Cancels: SIGTERM to the group (the host ends the run's commands and
   * writes final_result "canceled"), SIGKILL if it is still there after
   * graceMs.
   * @param {number} graceMs
   */
  cancel(graceMs) {
    this.killGroup('SIGTERM');
    const t = setTimeout(() => this.killGroup('SIGKILL'), graceMs);
    this.exited.then(() => clearTimeout(t));
  }

  /**
   * Closes stdin (the host exits 0 when idle) and waits for the exit.
   * @param {number} graceMs
   */
  async close(graceMs) {
    this.child.stdin.end();
    const t = setTimeout(() => this.killGroup('SIGKILL'), graceMs);
    const st = await this.exited;
    clearTimeout(t);
    // Whatever the host left in its group goes too. (The group's id stays
    // taken while any member lives, so this cannot reach another group.)
    this.killGroup('SIGKILL');
    return st;
  }
}

async function main() {
  let opts;
  try {
    ({ values: opts } = parseArgs({
      options: {
        host: { type: 'string', default: 'octet-host' },
        workspace: { type: 'string' },
        model: { type: 'string' },
        prompt: { type: 'string' },
        provider: { type: 'string' },
        'base-url': { type: 'string' },
        'provider-mode': { type: 'string' },
        'session-dir': { type: 'string' },
        'cancel-after-ms': { type: 'string' },
        'timeout-ms': { type: 'string', default: '60000' },
      },
    }));
  } catch (err) {
    console.error(`octet_client: ${err.message}`);
    return 2;
  }
  for (const name of ['workspace', 'model', 'prompt']) {
    if (!opts[name]) {
      console.error(`octet_client: --${name} is required`);
      return 2;
    }
  }
  const timeoutMs = Number(opts['timeout-ms']);
  const host = new Host(opts.host, []);
  process.on('SIGINT', () => host.cancel(6000)); // Ctrl-C cancels the run, not just this process
  try {
    host.send({ request_id: 'probe-1', command: 'hello' });
    const hello = await host.next(timeoutMs);
    const d = hello.data ?? {};
    if (hello.type !== 'hello' || d.protocol_version !== 1 || d.max_concurrent_runs !== 1 ||
        d.features?.process_group_abort !== true || d.features?.in_band_abort !== false) {
      throw new ProtocolViolation(`unexpected hello: ${JSON.stringify(hello).slice(0, 300)}`);
    }
    console.error(`host ${d.sdk_version}, protocol ${d.protocol_version}`);

    /** @type {Record<string, any>} */
    const run = { request_id: 'req-1', command: 'run', run_id: 'run-1', workspace: opts.workspace, model: opts.model, prompt: opts.prompt };
    if (opts['base-url']) {
      Object.assign(run, { provider: opts.provider ?? 'local', base_url: opts['base-url'] });
      if (opts['provider-mode']) run.provider_mode = opts['provider-mode'];
      if (process.env.OCTET_API_KEY) run.api_key = process.env.OCTET_API_KEY;
    }
    if (opts['session-dir']) run.session_dir = opts['session-dir'];
    host.send(run);
    /** @type {NodeJS.Timeout | undefined} */
    let cancelTimer;
    for (;;) {
      const ev = await host.next(timeoutMs);
      if (ev.type === 'started' && opts['cancel-after-ms']) {
        cancelTimer = setTimeout(() => {
          console.error('canceling: SIGTERM to the host process group');
          host.cancel(6000);
        }, Number(opts['cancel-after-ms']));
      }
      if (ev.type === 'model_delta' && ev.data.channel === 'text') process.stdout.write(ev.data.text);
      if (ev.type === 'protocol_error') {
        clearTimeout(cancelTimer);
        console.log(`\nfinal: status=protocol_error code=${ev.data.code}`);
        await host.close(6000);
        return 1;
      }
      if (ev.type === 'final_result') {
        clearTimeout(cancelTimer);
        console.log(`\nfinal: status=${ev.data.status} code=${ev.data.error?.code ?? ''}`);
        const st = await host.close(6000);
        console.error(`host exited: ${st.signal ?? st.code}`);
        return ev.data.status === 'completed' ? 0 : 1;
      }
    }
  } catch (err) {
    if (!(err instanceof ProtocolViolation)) throw err;
    console.error(`octet_client: protocol violation: ${err.message}`);
    if (host.stderrTail) console.error(`host stderr: ${host.stderrTail}`);
    host.killGroup('SIGKILL');
    return 3;
  }
}

process.exitCode = await main();
