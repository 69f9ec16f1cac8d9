"""A Spark standalone cluster on 127.0.0.1 (one master, one worker), started from PySpark's own `spark-class`
and stopped by process id: the distributed path of the reports job, on one machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from sqs_conformance.adapters.servers import free_port

START_SECONDS = 120


class StandaloneCluster:
    def __init__(self, logs: Path, cores: int = 2, memory: str = "1g") -> None:
        import pyspark

        self.spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
        self.logs = logs
        self.port, self.master_ui, self.worker_ui = free_port(), free_port(), free_port()
        self.cores, self.memory = cores, memory
        self.processes: list[subprocess.Popen] = []
        self._log_files: list = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def __enter__(self) -> StandaloneCluster:
        try:
            self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                        str(self.port), "--webui-port", str(self.master_ui))
            self._start("worker", "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                        "--webui-port", str(self.worker_ui), "--cores", str(self.cores), "--memory", self.memory)
            self._wait_for_worker()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)  # spark-class execs java in its own process group
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        for log in self._log_files:
            log.close()

    def _start(self, name: str, main_class: str, *args: str) -> None:
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_PUBLIC_DNS": "127.0.0.1",
               "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",  # else a fixed port, 6066
               "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}
        log = (self.logs / f"{name}.log").open("w")
        self._log_files.append(log)
        self.processes.append(subprocess.Popen([str(self.spark_class), main_class, *args], stdout=log,
                                               stderr=subprocess.STDOUT, env=env, start_new_session=True))

    def _wait_for_worker(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"a Spark daemon exited; see {self.logs}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.master_ui}/json/", timeout=5) as answer:
                    state = json.load(answer)
                if any(w.get("state") == "ALIVE" for w in state.get("workers", [])):
                    return
            except OSError:
                pass
            time.sleep(1)
        raise RuntimeError(f"no worker registered with {self.url} within {START_SECONDS} s; see {self.logs}")
