"""The endpoint harness's own overhead: requests per second against a server that answers at once.

Usage::

    .venv/bin/python bench/endpoint_overhead.py                    # 2,000 requests at concurrency 1, 8, 32
    .venv/bin/python bench/endpoint_overhead.py --requests 500 --concurrency 1,4 --json out.json

A uvicorn server in a child process on 127.0.0.1 (a port the system picks) answers every ``POST /search``
with the same plain-mapping body of 20 results (about 2.6 kB) without computing anything; this process
puts ``--requests`` distinct questions to it through :func:`audit.sources.endpoint.ask_endpoint` (the
harness as ``report --endpoint`` uses it: the template filled, the request sent, the answer read through the
JMESPath mapping, the outcome counted) at each concurrency, and prints requests per second, the p50/p99
latency the harness measured and the load average (``os.getloadavg``, as ``uptime`` prints it) before and
after. The server is stopped at the end, whatever happens. A reader compares the figures with the service's
own latency: a service answering in 50 ms at concurrency 8 gives at most 160 requests/s, far under what the
harness alone sustains here, so the harness is not the bottleneck.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

ANSWER = json.dumps({"results": [{"id": f"chunk-{i}", "score": 0.9 - i / 100, "text": "x" * 80, "doc_id": "a.md",
                                  "start": 100 * i, "end": 100 * i + 80} for i in range(20)]}).encode()


async def app(scope, receive, send):  # the ASGI app of the child process
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": ANSWER})


def _serve(port: int) -> None:
    import uvicorn

    uvicorn.run("bench.endpoint_overhead:app", host="127.0.0.1", port=port, log_level="error", access_log=False,
                lifespan="off")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc, timeout: float = 30.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:  # bounded: the server answers or the benchmark stops
        if proc.poll() is not None:
            raise SystemExit("the benchmark server exited before answering")
        try:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the benchmark server did not answer within 30 s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", default="1,8,32")
    p.add_argument("--json")
    p.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.serve:
        _serve(a.serve)
        return 0
    from audit.sources.endpoint import Question, ask_endpoint, endpoint_for_url

    port = _free_port()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen([sys.executable, "-m", "bench.endpoint_overhead", "--serve", str(port)], cwd=root,
                            env={**os.environ, "PYTHONPATH": root})
    rows = []
    try:
        url = f"http://127.0.0.1:{port}/search"
        _wait(url, proc)
        spec = endpoint_for_url(url, "bench")
        questions = [Question(f"q{i}", f"question number {i} about the relay") for i in range(a.requests)]
        ask_endpoint(spec, questions[:50], concurrency=4, deadline=10.0, retries=0)  # warm-up
        for c in (int(x) for x in a.concurrency.split(",")):
            load0 = os.getloadavg()
            asked = ask_endpoint(spec, questions, concurrency=c, deadline=30.0, retries=0, total_time=3600.0)
            load1 = os.getloadavg()
            log = asked.log
            lat = log.latency("answered")
            rows.append({"concurrency": c, "requests": len(questions), "answered": log.counts()["answered"],
                         "seconds": round(log.seconds, 3), "requests_per_s": round(log.requests_per_s, 1),
                         "p50_ms": round(lat["p50_ms"], 2), "p99_ms": round(lat["p99_ms"], 2),
                         "max_in_flight": log.max_in_flight,
                         "load_before": "{:.2f}/{:.2f}/{:.2f}".format(*load0),
                         "load_after": "{:.2f}/{:.2f}/{:.2f}".format(*load1)})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    out = {"rows": rows, "cpus": os.cpu_count(), "python": sys.version.split()[0]}
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
