"""Long-lived child processes that run the fuzz; a child that dies is replaced.

Each child takes one export's job at a time (see :mod:`.worker`). When a child
dies or stops answering, the case it announced last is the culprit: the
failure is recorded with that case, a fresh child replaces it, and the rest of
the export's cases continue in the new child under the next seed.
"""

from __future__ import annotations

import collections
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz.worker import read_frame, write_frame

ROOT = Path(__file__).resolve().parents[2]


class Worker:
    """One child process and its stderr log."""

    def __init__(self, config: dict, env: dict | None):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz.worker"], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        write_frame(self.proc.stdin, config)
        self.ready = False
        self.job: dict | None = None
        self.last_case: tuple | None = None
        self.done_cases = 0
        self.since = time.monotonic()

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, message) -> None:
        write_frame(self.proc.stdin, message)
        self.since = time.monotonic()

    def receive(self):
        """The next frame, or ``("died", how, stderr tail)`` when the child is gone."""
        reply = read_frame(self.proc.stdout)
        if reply is None:
            status = self.proc.wait()
            how = f"signal {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
            return ("died", how, self.stderr_tail())
        self.since = time.monotonic()
        return reply

    def stderr_tail(self, size: int = 4000) -> str:
        self.log.flush()
        self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, self.log.tell() - size))
        return self.log.read().decode(errors="replace")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def stop(self, timeout: float = 120) -> tuple[int | None, str]:
        """End the child; its exit status and stderr tail (a sanitizer's exit report lands there)."""
        if self.proc.poll() is None:
            try:
                self.send(("exit",))
                self.proc.stdin.close()
                self.proc.wait(timeout)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.kill()
        return self.proc.returncode, self.stderr_tail()


@dataclass
class Report:
    """What a run saw: outcome counts, failures (target, arguments, outcome), exit statuses."""

    seed: int | None  # None: the systematic pass, which draws nothing
    cases: int = 0
    outcomes: dict = field(default_factory=collections.Counter)
    failures: list = field(default_factory=list)
    exits: list = field(default_factory=list)
    respawns: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        drawn = "systematic" if self.seed is None else f"seed {self.seed}"
        return (f"{self.cases} cases, {drawn}, {self.seconds:.0f} s, "
                f"{self.respawns} child restarts ({counts})")


class Pool:
    """``workers`` children running jobs from a queue; replaces any that die or hang."""

    def __init__(self, probe: str | None = None, workers: int = 2, env: dict | None = None,
                 timeout: float = 60, start_timeout: float = 300):
        self.config = {"probe": probe}
        self.env = env
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.workers = [Worker(self.config, env) for _ in range(workers)]

    def call(self, library: str, name: str, specs: tuple):
        """One call in the first child (used to read signatures and to replay a case)."""
        worker = self.workers[0]
        self._wait_ready(worker)
        worker.send(("call", library, name, specs))
        reply = worker.receive()
        if reply[0] == "died":
            self.workers[0] = Worker(self.config, self.env)
            return reply
        return reply[1]

    def _wait_ready(self, worker: Worker) -> None:
        if not worker.ready:
            if not select.select([worker], [], [], self.start_timeout)[0]:
                raise RuntimeError(f"fuzz child did not start:\n{worker.stderr_tail()}")
            reply = worker.receive()
            if reply[0] != "ready":
                raise RuntimeError(f"fuzz child failed to start: {reply}")
            worker.ready = True

    def run(self, jobs: list[dict], report: Report) -> Report:
        """Run every job; a job's cases count its ``cases``, whatever children it took."""
        started = time.monotonic()
        queue = collections.deque(jobs)
        while queue or any(w.job for w in self.workers):
            for worker in self.workers:
                if worker.ready and worker.job is None and queue:
                    worker.job, worker.done_cases = queue.popleft(), 0
                    worker.send(("fuzz", worker.job))
            readable = select.select(self.workers, [], [], 1.0)[0]
            for worker in readable:
                self._handle(worker, worker.receive(), queue, report)
            for worker in self.workers:
                if worker.job and time.monotonic() - worker.since > self.timeout:
                    worker.proc.send_signal(signal.SIGUSR1)  # its Python stack, into the report
                    time.sleep(1)
                    worker.kill()
                    self._lost(worker, ("hang", f"no answer in {self.timeout:.0f} s", worker.stderr_tail()),
                               queue, report)
        report.seconds += time.monotonic() - started
        return report

    def _handle(self, worker: Worker, message, queue, report: Report) -> None:
        kind = message[0]
        if kind == "ready":
            worker.ready = True
        elif kind == "case":
            worker.last_case = message[1]
        elif kind == "outcome":
            outcome = message[1]
            worker.done_cases += 1
            report.cases += 1
            report.outcomes[outcome[0]] += 1
            if outcome[0] == "wrong":
                report.failures.append((worker.job, worker.last_case, outcome))
        elif kind == "done":
            worker.job = None
        elif kind == "died":
            self._lost(worker, message, queue, report)

    def _lost(self, worker: Worker, outcome, queue, report: Report) -> None:
        """A child died or hung: record the case it announced, replace it, resume its job."""
        job = worker.job
        index = self.workers.index(worker)
        self.workers[index] = Worker(self.config, self.env)
        report.respawns += 1
        if job is None:  # died between jobs: nothing to blame on a case
            report.failures.append(({"name": "(between cases)", "library": ""}, None, outcome))
            return
        report.cases += 1
        report.outcomes[outcome[0]] += 1
        if not job["may_abort"]:
            report.failures.append((job, worker.last_case, outcome))
        left = job["cases"] - worker.done_cases - 1
        if "specs" in job and left > 0:  # a listed case each: go on after the one that died
            specs = job["specs"][worker.done_cases + 1:]
            queue.appendleft(dict(job, cases=len(specs), specs=specs))
        elif left > 0 and job.get("retries", 0) < 3:
            queue.appendleft(dict(job, cases=left, seed=job["seed"] + 1, retries=job.get("retries", 0) + 1))

    def close(self) -> list[tuple[int | None, str]]:
        """Stop every child; their exit statuses and stderr tails."""
        return [w.stop() for w in self.workers]
