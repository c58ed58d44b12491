#!/usr/bin/env python3
"""A minimal protocol-1 client for octet-host in Python (3.8+, standard
library only). It does what every client of the host must do:

- start the host in its own process group (start_new_session), so that one
  signal reaches the host and every command it runs;
- drain stderr separately (bounded) and never parse it;
- read stdout line by line, each line at most 1 MiB, one JSON object;
- check every event: protocol_version 1, a request_id it sent, seq 1, 2, 3,
  ... per request, nothing after the request's one terminal event, the
  run's run_id on run events;
- send hello and validate it before any work, then send a run;
- cancel by signalling the process group (SIGTERM, then SIGKILL after a
  grace): protocol 1 has no in-band abort.

Usage:

  python3 octet_client.py --host PATH --workspace DIR --model ID --prompt TEXT
      [--provider NAME --base-url URL --provider-mode MODE] [--session-dir DIR]
      [--cancel-after-ms N] [--timeout-ms N]

--cancel-after-ms cancels the run N ms after it started, as Ctrl-C does.

The API key of an inline route is read from the environment variable
OCTET_API_KEY, never from the command line. The answer's text streams to
stdout; the last line is "final: status=S code=C". Exit status: 0 for a
completed run, 1 for any other final status, 2 for bad usage, 3 when the
host broke the protocol or did not answer in time.
"""

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading

MAX_FRAME = 1048576  # bytes per frame, newline included
STDERR_TAIL = 4096  # bytes of stderr kept for diagnostics
TERMINAL = {"hello", "models", "shutdown", "final_result", "protocol_error"}


class ProtocolViolation(Exception):
    """The host did not follow the protocol."""


class Host:
    def __init__(self, path, args=()):
        # start_new_session: the child calls setsid, so its pid is its
        # process group's id and os.killpg(pid, ...) signals the whole group.
        self.proc = subprocess.Popen([path, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.stderr_tail = b""
        self.requests = {}
        self.events = queue.Queue()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _drain_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL:]

    def _read_stdout(self):
        while True:
            line = self.proc.stdout.readline(MAX_FRAME + 1)  # bounded: never buffers more than a frame
            if not line:
                self.events.put(ProtocolViolation("the host closed stdout"))
                return
            if not line.endswith(b"\n"):
                self.events.put(ProtocolViolation("an event line exceeds 1 MiB or ends without a newline"))
                return
            try:
                ev = json.loads(line)
            except ValueError:
                self.events.put(ProtocolViolation("not JSON: %r" % line[:200]))
                return
            self.events.put(self._check(ev) or ev)

    def _check(self, ev):
        """Checks one event against the protocol; returns the violation, if any."""
        if not isinstance(ev, dict):
            return ProtocolViolation("an event is not an object")
        if ev.get("protocol_version") != 1:
            return ProtocolViolation("protocol_version %r, not 1" % ev.get("protocol_version"))
        req = self.requests.get(ev.get("request_id"))
        if req is None:
            return ProtocolViolation("an event for request_id %r, which this client did not send" % ev.get("request_id"))
        if req["done"]:
            return ProtocolViolation("an event for %s after its terminal event" % ev["request_id"])
        if ev.get("seq") != req["seq"] + 1:
            return ProtocolViolation("seq %r after seq %d for %s" % (ev.get("seq"), req["seq"], ev["request_id"]))
        req["seq"] = ev["seq"]
        if req["run_id"] is not None and ev.get("type") != "protocol_error":
            if ev.get("run_id") != req["run_id"]:
                return ProtocolViolation("run event without run_id %s" % req["run_id"])
            if req["session_id"] is not None and ev.get("session_id") != req["session_id"]:
                return ProtocolViolation("run event without session_id %s" % req["session_id"])
        if ev.get("type") in TERMINAL:
            req["done"] = True
        return None

    def next(self, timeout):
        """The next event; raises on a violation or after timeout seconds."""
        try:
            v = self.events.get(timeout=timeout)
        except queue.Empty:
            raise ProtocolViolation("no event within %g s" % timeout) from None
        if isinstance(v, Exception):
            raise v
        return v

    def send(self, req):
        self.requests[req["request_id"]] = {"seq": 0, "done": False,
                                            "run_id": req.get("run_id"), "session_id": req.get("session_id")}
        try:
            self.proc.stdin.write((json.dumps(dict(protocol_version=1, **req)) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # the host exited: its answer, or its absence, tells

    def kill_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass  # the group is gone

    def cancel(self, grace=6.0):
        """SIGTERM to the group (the host ends the run's commands and writes
        final_result "canceled"), SIGKILL if it is still there after grace."""
        self.kill_group(signal.SIGTERM)
        timer = threading.Timer(grace, lambda: self.proc.poll() is None and self.kill_group(signal.SIGKILL))
        timer.daemon = True
        timer.start()

    def close(self, grace=6.0):
        """Closes stdin (the host exits 0 when idle) and waits for the exit."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            code = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill_group(signal.SIGKILL)
            code = self.proc.wait()
        # Whatever the host left in its group goes too. (The group's id
        # stays taken while any member lives, so this cannot reach another
        # group.)
        self.kill_group(signal.SIGKILL)
        return code


def main():
    ap = argparse.ArgumentParser(description="Run one prompt through octet-host over protocol 1.")
    ap.add_argument("--host", default="octet-host")
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--provider")
    ap.add_argument("--base-url")
    ap.add_argument("--provider-mode")
    ap.add_argument("--session-dir")
    ap.add_argument("--cancel-after-ms", type=int)
    ap.add_argument("--timeout-ms", type=int, default=60000)
    opts = ap.parse_args()  # exits 2 on bad usage
    timeout = opts.timeout_ms / 1000

    host = Host(opts.host)
    signal.signal(signal.SIGINT, lambda *_: host.cancel())  # Ctrl-C cancels the run, not just this process
    try:
        host.send({"request_id": "probe-1", "command": "hello"})
        hello = host.next(timeout)
        d = hello.get("data") or {}
        feats = d.get("features") or {}
        if (hello.get("type") != "hello" or d.get("protocol_version") != 1 or d.get("max_concurrent_runs") != 1
                or feats.get("process_group_abort") is not True or feats.get("in_band_abort") is not False):
            raise ProtocolViolation("unexpected hello: %s" % json.dumps(hello)[:300])
        print("host %s, protocol %d" % (d.get("sdk_version"), d["protocol_version"]), file=sys.stderr)

        run = {"request_id": "req-1", "command": "run", "run_id": "run-1", "workspace": opts.workspace,
               "model": opts.model, "prompt": opts.prompt}
        if opts.base_url:
            run.update(provider=opts.provider or "local", base_url=opts.base_url)
            if opts.provider_mode:
                run["provider_mode"] = opts.provider_mode
            if os.environ.get("OCTET_API_KEY"):
                run["api_key"] = os.environ["OCTET_API_KEY"]
        if opts.session_dir:
            run["session_dir"] = opts.session_dir
        host.send(run)
        timer = None

        def cancel():
            print("canceling: SIGTERM to the host process group", file=sys.stderr)
            host.cancel()

        while True:
            ev = host.next(timeout)
            data = ev.get("data") or {}
            if ev["type"] == "started" and opts.cancel_after_ms is not None:
                timer = threading.Timer(opts.cancel_after_ms / 1000, cancel)
                timer.daemon = True
                timer.start()
            if ev["type"] == "model_delta" and data.get("channel") == "text":
                sys.stdout.write(data.get("text", ""))
                sys.stdout.flush()
            elif ev["type"] in ("final_result", "protocol_error"):
                if timer:
                    timer.cancel()
                if ev["type"] == "protocol_error":
                    status, code = "protocol_error", data.get("code")
                else:
                    status, code = data.get("status"), (data.get("error") or {}).get("code", "")
                print("\nfinal: status=%s code=%s" % (status, code))
                print("host exited: %s" % host.close(), file=sys.stderr)
                return 0 if status == "completed" else 1
    except ProtocolViolation as e:
        print("octet_client: protocol violation: %s" % e, file=sys.stderr)
        if host.stderr_tail:
            print("host stderr: %s" % host.stderr_tail.decode(errors="replace"), file=sys.stderr)
        host.kill_group(signal.SIGKILL)
        return 3


if __name__ == "__main__":
    sys.exit(main())
