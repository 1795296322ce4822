"""A real `entelechy serve --listen` for the tests: the one named by the environment, or one started here.

ENTELECHY_PORT (and ENTELECHY_HOST, default 127.0.0.1) name a running session; ENTELECHY_SCENE_DIR is
its scene's folder (to look at the documents on disk). Without ENTELECHY_PORT the tests start a session
themselves on a temporary copy of examples/rings, with node and the repository's bin/entelechy.js
(ENTELECHY_BIN overrides it; build the repository first: `npx tsc -p tsconfig.json`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Optional

HERE = Path(__file__).resolve().parent
DCC = HERE.parent
REPO = DCC.parent.parent
sys.path.insert(0, str(DCC))


def entelechy_bin() -> Path:
    return Path(os.environ.get("ENTELECHY_BIN", str(REPO / "bin" / "entelechy.js")))


class Server:
    """`node bin/entelechy.js serve SCENE --listen HOST:PORT` on a copy of an example, stdin kept open."""

    def __init__(self, example: str = "rings", folder: Optional[Path] = None) -> None:
        self.folder = folder or Path(tempfile.mkdtemp(prefix=f"entelechy-dcc-{example}-"))
        if folder is None:
            shutil.copytree(REPO / "examples" / example, self.folder, dirs_exist_ok=True)
        self.host = "127.0.0.1"
        self.port = 0
        self.process: Optional[subprocess.Popen] = None
        self.stderr: List[str] = []

    @property
    def scene(self) -> Path:
        return self.folder / "scene.esn"

    def start(self, port: int = 0, timeout: float = 240.0) -> "Server":
        """Start it and wait until it listens (generous: a loaded machine starts node slowly)."""
        node = shutil.which("node") or "node"
        args = [node, str(entelechy_bin()), "serve", str(self.scene), "--workers", "1", "--listen", f"{self.host}:{port}"]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        found = threading.Event()
        process = self.process

        def pump() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                self.stderr.append(line)
                m = re.search(r"listening on (\S+):(\d+)", line)
                if m and not found.is_set():
                    self.port = int(m.group(2))
                    found.set()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if process.poll() is not None or time.monotonic() > deadline:
                why = f"exited ({process.returncode})" if process.poll() is not None else f"not listening after {timeout:.0f} s"
                self.stop()
                raise RuntimeError(f"entelechy serve did not listen ({why}): {''.join(self.stderr)}")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            for stream in (self.process.stdin, self.process.stderr):
                if stream is not None:
                    stream.close()
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class Background:
    """A Server started on a thread (its startup overlaps other tests); ``wait`` gives it."""

    def __init__(self) -> None:
        self.server = Server()
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None

    def begin(self) -> None:
        def run() -> None:
            try:
                self.server.start()
            except BaseException as err:  # noqa: BLE001 - handed to wait()
                self._error = err

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def wait(self) -> Server:
        if self._thread is None:
            self.begin()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self.server

    def remove(self) -> None:
        if self._thread is not None:
            self._thread.join()
        self.server.remove()


_started: Optional[Server] = None


def shared() -> "tuple[str, int, Path]":
    """The session the tests share: (host, port, scene folder)."""
    global _started
    if os.environ.get("ENTELECHY_PORT"):
        folder = Path(os.environ.get("ENTELECHY_SCENE_DIR", ""))
        return os.environ.get("ENTELECHY_HOST", "127.0.0.1"), int(os.environ["ENTELECHY_PORT"]), folder
    if _started is None:
        _started = Server().start()
    return _started.host, _started.port, _started.folder


def stop_shared() -> None:
    global _started
    if _started is not None:
        _started.remove()
        _started = None
