"""A real HTTP serving path on 127.0.0.1: the tiny GPT behind a continuous-batching scheduler (chapter 19).

``POST /generate {"id": i, "max_new": n}`` queues a request; one scheduler thread runs decode steps over every
active request (up to ``max_batch``), admits waiting ones into free slots after each step, and answers each request
when its last token is out. Standard library only (``http.server``; FastAPI/uvicorn would serve the same scheduler).
:func:`serve` is a context manager: the server binds a free port, and stops — threads joined — when it exits.
:func:`load_test` sends a bounded number of concurrent requests and returns latency percentiles and throughput.
"""
from __future__ import annotations

import json
import queue
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from helpers.serving.batching import TinyDecoder


class Scheduler(threading.Thread):
    def __init__(self, dec: TinyDecoder, max_batch: int = 8):
        super().__init__(daemon=True)
        self.dec, self.max_batch = dec, max_batch
        self.inbox: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.steps = 0

    def submit(self, rid: int, max_new: int) -> dict:
        done = threading.Event()
        box = {"id": rid, "left": max_new, "tokens": [], "done": done}
        self.inbox.put(box)
        if not done.wait(60):
            raise TimeoutError(f"request {rid} not answered in 60 s")
        return {"id": rid, "tokens": box["tokens"], "batch_steps": box["steps"]}

    def run(self):
        torch = self.dec.torch
        active: list[dict] = []
        while not self.stop.is_set():
            while len(active) < self.max_batch:
                try:
                    box = self.inbox.get(timeout=0.01 if not active else 0)
                except queue.Empty:
                    break
                box["ctx"], box["steps"] = self.dec.prompt(box["id"]), 0
                active.append(box)
            if not active:
                continue
            nxt = self.dec.step(torch.stack([b["ctx"] for b in active]))
            self.steps += 1
            for b, tok in zip(active, nxt):
                b["ctx"] = torch.cat([b["ctx"][1:], tok.view(1)])
                b["tokens"].append(int(tok))
                b["left"] -= 1
                b["steps"] += 1
            for b in [b for b in active if b["left"] == 0]:
                active.remove(b)
                b["done"].set()


@contextmanager
def serve(dec: TinyDecoder, max_batch: int = 8):
    sched = Scheduler(dec, max_batch)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            n = int(body.get("max_new", 0))
            if not 1 <= n <= 1024:
                self.send_error(400, f"max_new={n}: use 1..1024")
                return
            out = json.dumps(sched.submit(int(body["id"]), n)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):                # keep the notebook's output clean
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    web = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    sched.start()
    web.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", sched
    finally:
        httpd.shutdown()
        httpd.server_close()
        sched.stop.set()
        web.join(5)
        sched.join(5)


@dataclass(frozen=True)
class LoadResult:
    max_batch: int
    requests: int
    concurrency: int
    tokens: int
    total_s: float
    tokens_per_s: float
    p50_latency_s: float
    p99_latency_s: float
    scheduler_steps: int


def load_test(url: str, sched: Scheduler, lengths: list[int], concurrency: int = 8) -> LoadResult:
    def one(i):
        req = urllib.request.Request(url + "/generate", data=json.dumps({"id": i, "max_new": lengths[i]}).encode(),
                                     headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=60) as r:
            out = json.loads(r.read())
        if len(out["tokens"]) != lengths[i]:
            raise RuntimeError(f"request {i}: got {len(out['tokens'])} tokens, asked {lengths[i]}")
        return time.perf_counter() - t0
    s0 = sched.steps
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        lat = list(pool.map(one, range(len(lengths))))
    total = time.perf_counter() - t0
    toks = int(sum(lengths))
    return LoadResult(sched.max_batch, len(lengths), concurrency, toks, total, toks / total,
                      float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), sched.steps - s0)
