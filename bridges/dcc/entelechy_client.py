"""A client for Entelechy's agent protocol over TCP (`entelechy serve SCENE --listen HOST:PORT`).

Standard library only, Python 3.9+. One JSON object a line each way: a request
``{"id": 1, "op": "status", ...}`` is answered by ``{"id": 1, "ok": {...}}`` or
``{"id": 1, "error": {"message": ..., "fix"?: ..., ...}}``.

    from entelechy_client import Client, EntelechyError

    with Client("127.0.0.1", 7788) as session:
        print(session.status()["frame"])
        session.param("warmth", 0.9)
        session.evaluate()
        field = session.read_f32("result")       # width, height, components, planes
        try:
            session.param("count", 3)
        except EntelechyError as err:
            print(err, err.fix)                  # the edit to hand back to compose

Every operation of the protocol is a method (``OPERATIONS`` lists them; a test checks the list
against the operations the server reports). Answers are the ``ok`` objects as dicts. Errors raise
``EntelechyError`` keeping the error's data (``fix``, ``node``, ``fields``, ``line``, ...). Events
riding on answers (``events``), and any unsolicited event line, are kept in ``Client.events`` and
handed to ``on_event``. A dropped connection is reopened on the next request; a request that was
sent when the connection dropped is sent again only when it changes nothing (see ``SAFE``), else
``ConnectionLost`` says it may or may not have been applied.
"""

from __future__ import annotations

import base64
import json
import select
import socket
import sys
import threading
import time
from array import array
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Deque, Dict, Iterable, List, Optional, Sequence, Tuple, Union

__all__ = [
    "Client",
    "EntelechyError",
    "ConnectionLost",
    "ProtocolViolation",
    "Field",
    "OPERATIONS",
    "SAFE",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7788

#: The protocol's operations, in the order of docs/protocol.md's table (src/protocol/operations.ts).
OPERATIONS: Tuple[str, ...] = (
    "status", "kernels", "kernel", "graph", "document", "history", "bisect",
    "compose", "sync",
    "prepare", "publish", "retire",
    "param",
    "evaluate", "read", "write", "snapshot", "restore", "pause", "reset", "help", "trace", "pin", "unpin", "cancel",
    "quit",
)

#: Operations that change nothing in the world: sent again after a connection dropped mid-request.
SAFE = frozenset({"status", "kernels", "kernel", "graph", "document", "history", "bisect", "help", "prepare", "read", "trace"})

Number = Union[int, float]
Value = Union[Number, Sequence[Number]]
Answer = Dict[str, Any]
Event = Dict[str, Any]


class EntelechyError(Exception):
    """An error the session answered: ``message`` plus every datum it carried.

    ``data`` is the whole ``error`` object; the usual keys are properties too: ``fix`` (an edit item
    to hand back to ``compose``), ``node``, ``fields`` / ``field`` / ``expected``, ``line`` /
    ``column``, ``operations``, ``similar``, ``diagnostics``.
    """

    def __init__(self, data: Dict[str, Any], op: Optional[str] = None, request_id: Optional[Any] = None) -> None:
        self.data: Dict[str, Any] = dict(data)
        self.message: str = str(data.get("message", "error"))
        self.op = op
        self.request_id = request_id
        super().__init__(self.message)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def fix(self) -> Optional[Dict[str, Any]]:
        return self.data.get("fix")

    @property
    def node(self) -> Optional[str]:
        return self.data.get("node")

    @property
    def fields(self) -> Optional[List[str]]:
        return self.data.get("fields")

    @property
    def field(self) -> Optional[str]:
        return self.data.get("field")

    @property
    def expected(self) -> Optional[str]:
        return self.data.get("expected")

    @property
    def line(self) -> Optional[int]:
        return self.data.get("line")

    @property
    def column(self) -> Optional[int]:
        return self.data.get("column")

    @property
    def operations(self) -> Optional[List[str]]:
        return self.data.get("operations")

    @property
    def similar(self) -> Optional[List[str]]:
        return self.data.get("similar")

    @property
    def diagnostics(self) -> List[Dict[str, Any]]:
        return list(self.data.get("diagnostics") or [])

    def __repr__(self) -> str:
        return f"EntelechyError({self.data!r})"


class ConnectionLost(ConnectionError):
    """The connection dropped while a request that changes the world was in flight, or could not be
    reopened. ``op`` names the request; whether it was applied is unknown (ask ``status``)."""

    def __init__(self, message: str, op: Optional[str] = None) -> None:
        super().__init__(message)
        self.op = op


class ProtocolViolation(RuntimeError):
    """The server answered something that is not the protocol (not JSON, or another request's id)."""


@dataclass
class Field:
    """A field read as f32: ``planes[c][i]`` is component ``c`` of element ``i = (z*height + y)*width + x``.

    Row ``y = 0`` is the top row (as in the PNG ``read`` answers).
    """

    name: str
    width: int
    height: int
    components: int
    planes: List[array]
    depth: Optional[int] = None
    frame: Optional[int] = None

    def at(self, x: int, y: int = 0, z: int = 0) -> Tuple[float, ...]:
        i = (z * self.height + y) * self.width + x
        return tuple(p[i] for p in self.planes)

    def rgba(self, bottom_up: bool = False) -> array:
        """Flat RGBA floats (vec4 is RGBA, vec3 RGB, vec2 RG, one component gray; alpha 1 where
        missing), rows top-down or, with ``bottom_up`` (Blender's ``Image.pixels``), bottom-up."""
        if self.depth is not None:
            raise ValueError(f"`{self.name}` is a 3-D field: an image needs a 2-D one")
        w, h, k = self.width, self.height, self.components
        n = w * h
        out = array("f", bytes(4 * 4 * n))
        if k == 1:
            sources: List[Optional[array]] = [self.planes[0], self.planes[0], self.planes[0], None]
        else:
            sources = [self.planes[c] if c < k else None for c in range(4)]
        for c, plane in enumerate(sources):
            if plane is None:
                if c == 3:
                    out[3::4] = array("f", [1.0]) * n
                continue
            if not bottom_up:
                out[c::4] = plane[:n]
            else:
                for row in range(h):
                    src = plane[(h - 1 - row) * w:(h - row) * w]
                    out[row * w * 4 + c:(row + 1) * w * 4:4] = src
        return out


def decode_f32(answer: Answer) -> Field:
    """A ``read`` answer with ``format: f32`` as a ``Field`` (little-endian floats, component-major planes)."""
    if answer.get("format") != "f32":
        raise ValueError(f"not an f32 read (format {answer.get('format')!r})")
    values = array("f")
    values.frombytes(base64.b64decode(answer["data"]))
    if sys.byteorder == "big":
        values.byteswap()
    width, height = int(answer["width"]), int(answer["height"])
    depth = answer.get("depth")
    n = width * height * (int(depth) if depth is not None else 1)
    components = int(answer.get("components") or (len(values) // n if n else 0))
    if n * components != len(values):
        raise ProtocolViolation(f"read answered {len(values)} floats for {components} x {n} elements")
    planes = [values[c * n:(c + 1) * n] for c in range(components)]
    return Field(str(answer.get("name", "")), width, height, components, planes,
                 int(depth) if depth is not None else None, answer.get("frame"))


def encode_f32(planes: Iterable[Iterable[float]]) -> str:
    """Component-major planes as the base64 little-endian f32 that ``write`` takes as ``data``."""
    values = array("f")
    for plane in planes:
        values.extend(float(v) for v in plane)
    if sys.byteorder == "big":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")


def _fields(**fields: Any) -> Dict[str, Any]:
    """Request fields without the ones left out (None)."""
    return {k: v for k, v in fields.items() if v is not None}


class Client:
    """One TCP connection to an Entelechy session, reopened when it drops.

    Requests are answered in order, one at a time; the client is safe to share between threads
    (a lock serialises requests). ``timeout`` bounds the wait for one answer.
    """

    def __init__(
        self,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        reconnect: bool = True,
        reconnect_attempts: int = 5,
        reconnect_delay: float = 0.2,
        on_event: Optional[Callable[[Event], None]] = None,
        max_events: int = 1000,
        connect: bool = True,
    ) -> None:
        self.host = host
        self.port = int(port)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.reconnect = reconnect
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_delay = reconnect_delay
        self.on_event = on_event
        #: Events seen on answers and event lines, oldest first (bounded by ``max_events``).
        self.events: Deque[Event] = deque(maxlen=max_events)
        #: How many times a connection was opened (1 after the first connect).
        self.connects = 0
        #: The id of the session this client last connected to (``status``'s ``session``).
        self.session: Optional[str] = None
        #: How many times a reconnection found another session (restarted): its params and state
        #: are the scene's again. Each is also told as a ``session_restarted`` event.
        self.restarts = 0
        #: The id the session echoed on the last answer (each request gets the next integer).
        self.last_answer_id: Optional[Any] = None
        self._sock: Optional[socket.socket] = None
        self._buffer = b""
        self._next_id = 0
        self._lock = threading.RLock()
        if connect:
            self.connect()

    # -- the connection -------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def connect(self) -> "Client":
        """Open the connection (a no-op when open). Retries ``reconnect_attempts`` times."""
        with self._lock:
            if self._sock is not None:
                return self
            attempts = max(1, self.reconnect_attempts)
            last: Optional[BaseException] = None
            for attempt in range(attempts):
                try:
                    sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
                except OSError as err:
                    last = err
                    if attempt + 1 < attempts:
                        time.sleep(self.reconnect_delay * (attempt + 1))
                    continue
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._sock = sock
                self._buffer = b""
                self.connects += 1
                self._learn_session()
                return self
            raise ConnectionLost(
                f"cannot connect to an Entelechy session at {self.host}:{self.port} ({last}); "
                f"start one with `entelechy serve SCENE --listen {self.host}:{self.port}`"
            )

    def _learn_session(self) -> None:
        """Ask the session who it is. A reconnection that finds another session (the server
        restarted) tells it: what this client set there (params, state, kernels) is gone, and a
        caller that keeps values (a DCC's panel) must send them again."""
        try:
            session = self._exchange("status", {}).get("session")
        except (ConnectionError, OSError, ProtocolViolation) as err:
            self._drop()
            raise ConnectionLost(f"the session at {self.host}:{self.port} closed the connection at once ({err})") from err
        if not isinstance(session, str):
            return
        was, self.session = self.session, session
        if was is not None and was != session:
            self.restarts += 1
            self._note_events([{
                "kind": "session_restarted", "session": session, "was": was,
                "message": f"the session at {self.host}:{self.port} is a new one (it restarted): its params, "
                "state and kernels are the scene's again; send again what you had set",
            }])

    def close(self) -> None:
        """Close the connection (the session goes on; a later request opens a new one)."""
        with self._lock:
            self._drop()

    def __enter__(self) -> "Client":
        return self.connect()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _drop(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
        self._buffer = b""

    def _peer_closed(self) -> bool:
        """Whether the server closed the connection since the last answer (checked before sending,
        so a request is never written into a connection already gone)."""
        sock = self._sock
        if sock is None:
            return True
        try:
            while select.select([sock], [], [], 0)[0]:
                sock.setblocking(False)
                try:
                    chunk = sock.recv(65536)
                finally:
                    sock.setblocking(True)
                if not chunk:
                    return True
                self._buffer += chunk  # an event line (or a stray answer): kept for the reader
        except BlockingIOError:
            return False
        except OSError:
            return True
        return False

    def _readline(self, deadline: float) -> bytes:
        sock = self._sock
        assert sock is not None
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer within {self.timeout} s")
            sock.settimeout(left)
            try:
                chunk = sock.recv(1 << 20)
            except socket.timeout:
                raise TimeoutError(f"no answer within {self.timeout} s") from None
            if not chunk:
                raise ConnectionResetError("the session closed the connection")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    # -- requests -------------------------------------------------------------------------------

    def request(self, op: str, **fields: Any) -> Answer:
        """Send one request and return its ``ok`` answer; raise ``EntelechyError`` on an error answer.

        Fields given as None are left out. This is what every operation method calls.
        """
        with self._lock:
            if self._sock is not None and self._peer_closed():
                self._drop()
            if self._sock is None:
                if self.connects > 0 and not self.reconnect:
                    raise ConnectionLost("the connection is closed (reconnect is off)", op)
                self.connect()
            try:
                return self._exchange(op, fields)
            except ProtocolViolation:
                self._drop()  # answers and requests no longer pair up on this connection
                raise
            except (ConnectionError, OSError) as err:
                if isinstance(err, (ConnectionLost, TimeoutError)):
                    self._drop()
                    raise
                self._drop()
                if op == "quit":
                    return {}
                if not (self.reconnect and op in SAFE):
                    raise ConnectionLost(
                        f"the connection dropped during `{op}` ({err}); it may or may not have been applied", op
                    ) from err
                self.connect()
                try:
                    return self._exchange(op, fields)
                except (ConnectionError, OSError, ProtocolViolation) as again:
                    self._drop()
                    raise ConnectionLost(f"the connection dropped during `{op}`, twice ({again})", op) from again

    def _exchange(self, op: str, fields: Dict[str, Any]) -> Answer:
        self._next_id += 1
        rid = self._next_id
        message = {"id": rid, "op": op}
        message.update(_fields(**fields))
        sock = self._sock
        assert sock is not None
        sock.sendall(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
        deadline = time.monotonic() + self.timeout
        while True:
            raw = self._readline(deadline)
            if not raw.strip():
                continue
            try:
                answer = json.loads(raw.decode("utf-8"))
            except ValueError as err:
                raise ProtocolViolation(f"not a JSON line from the session: {raw[:200]!r}") from err
            if not isinstance(answer, dict):
                raise ProtocolViolation(f"not a JSON object from the session: {raw[:200]!r}")
            if "ok" not in answer and "error" not in answer:
                self._event_line(answer)  # unsolicited: an event
                continue
            if "ok" in answer and "id" not in answer:
                continue  # an answer to a request without an id: not one of this client's
            if "id" in answer and answer["id"] != rid:
                raise ProtocolViolation(f"answer for id {answer['id']!r} while waiting for id {rid} ({op})")
            self.last_answer_id = answer.get("id")
            if "error" in answer:
                error = answer["error"] if isinstance(answer["error"], dict) else {"message": str(answer["error"])}
                self._note_events(error.get("events"))
                if op == "quit":
                    self._drop()
                raise EntelechyError(error, op, rid)
            ok = answer["ok"]
            if isinstance(ok, dict):
                self._note_events(ok.get("events"))
            if op == "quit":
                self._drop()  # the door closes this connection after answering
            return ok if isinstance(ok, dict) else {"value": ok}

    def _note_events(self, events: Any) -> None:
        if not isinstance(events, list):
            return
        for event in events:
            if isinstance(event, dict):
                self.events.append(event)
                if self.on_event is not None:
                    self.on_event(event)

    def _event_line(self, line: Dict[str, Any]) -> None:
        if isinstance(line.get("events"), list):
            self._note_events(line["events"])
        else:
            self._note_events([line.get("event", line)])

    def take_events(self) -> List[Event]:
        """The events seen so far, oldest first; clears them."""
        with self._lock:
            out = list(self.events)
            self.events.clear()
            return out

    # -- the operations (one method each; see docs/protocol.md) --------------------------------

    # Inspect
    def status(self) -> Answer:
        """The world at a glance."""
        return self.request("status")

    def kernels(self) -> Answer:
        """Every kernel the registry holds: ``{"kernels": [{id, generation, origin, ports, grants}]}``."""
        return self.request("kernels")

    def kernel(self, kernel: str) -> Answer:
        """One kernel: its source, ports, grants and state."""
        return self.request("kernel", kernel=kernel)

    def graph(self) -> Answer:
        """The nodes, their members and edges, the outputs, params, the order and fused groups."""
        return self.request("graph")

    def document(self, path: Optional[str] = None, version: Optional[str] = None) -> Answer:
        """A document's text and statements (the scene's by default)."""
        return self.request("document", path=path, version=version)

    def history(self, path: Optional[str] = None) -> Answer:
        """A document's versions this session has seen, and the generations published over the
        protocol meanwhile (``generations``)."""
        return self.request("history", path=path)

    def bisect(
        self,
        good: str,
        bad: str,
        test: Optional[str] = None,
        replay: Optional[str] = None,
        path: Optional[str] = None,
        deadline: Optional[float] = None,
    ) -> Answer:
        """The first point in ``history`` (its versions and the generations published over the
        protocol) at which a replay starts failing: ``good`` and ``bad`` are positions in history's
        versions (0 = the first), version digests (or their first 4+ characters), ``"running"``,
        ``"disk"``, or generations: ``"KERNEL gN"`` or ``"pI"`` (history's ``generations``); the
        replay is ``test`` (a .replay file under the scene's folder) or ``replay`` (its text).
        Answers first_bad, last_good (kind, name, ...), diff, kernels_diff, failure, candidates, runs."""
        return self.request("bisect", good=good, bad=bad, test=test, replay=replay, path=path, deadline=deadline)

    def help(self, name: Optional[str] = None) -> Answer:
        """Describe an operation, field, type, builtin, ...; without a name, the index."""
        return self.request("help", name=name)

    # Structure
    def compose(
        self,
        text: Optional[str] = None,
        edits: Optional[List[Dict[str, Any]]] = None,
        documents: Optional[List[Dict[str, Any]]] = None,
        path: Optional[str] = None,
        expect: Optional[str] = None,
        deadline: Optional[float] = None,
        dry_run: Optional[bool] = None,
        evaluate: Optional[Dict[str, Any]] = None,
    ) -> Answer:
        """Change documents: a whole ``text``, ``edits`` of statements and members, or several
        ``documents`` at once; checked and compiled before anything is written (``deadline``:
        milliseconds it may take before it writes, else it is cancelled and nothing changes).
        ``dry_run``: nothing is written; with ``evaluate`` ({frames, time, outputs, thumbnail,
        png, values}) the change runs on a fork and the answer's ``evaluation`` shows what it would do."""
        return self.request("compose", text=text, edits=edits, documents=documents, path=path, expect=expect, deadline=deadline, dry_run=dry_run, evaluate=evaluate)

    def sync(self, deadline: Optional[float] = None) -> Answer:
        """Pick up edits saved on disk; answers the events since the last sync.

        ``deadline`` (milliseconds) bounds the saved edit it starts, which goes on after the
        answer; past it the edit is ``rejected`` on a later sync and nothing changes."""
        return self.request("sync", deadline=deadline)

    # Kernels
    def prepare(self, source: str, path: Optional[str] = None, evaluate: Optional[Dict[str, Any]] = None) -> Answer:
        """Check and compile a kernel without changing anything (``evaluate``: also run it, published, on a fork)."""
        return self.request("prepare", source=source, path=path, evaluate=evaluate)

    def publish(self, source: str, expect: Optional[int] = None, dry_run: Optional[bool] = None, evaluate: Optional[Dict[str, Any]] = None) -> Answer:
        """Replace or add a kernel in the running world (not in a file); ``dry_run`` (with ``evaluate``): only see what it would do."""
        return self.request("publish", source=source, expect=expect, dry_run=dry_run, evaluate=evaluate)

    def retire(self, kernel: str, expect: Optional[int] = None) -> Answer:
        """Withdraw a kernel published over the protocol."""
        return self.request("retire", kernel=kernel, expect=expect)

    # Parameters
    def param(self, name: str, value: Value) -> Answer:
        """Set a graph param: a number, or numbers for a vector."""
        return self.request("param", name=name, value=list(value) if isinstance(value, (list, tuple)) else value)

    # Running
    def evaluate(
        self,
        time: Optional[float] = None,
        outputs: Optional[List[str]] = None,
        pointer: Optional[Dict[str, Any]] = None,
        keys: Optional[List[str]] = None,
        deadline: Optional[float] = None,
        profile: Optional[bool] = None,
        frames: Optional[int] = None,
        thumbnail: Optional[int] = None,
    ) -> Answer:
        """Evaluate a frame (``deadline``: milliseconds it may take, else it is cancelled). ``profile=True``
        times every node on its own instead (the next frame on an unfused copy; the world does not move).
        ``frames=N`` runs N frames one after another and answers the last.
        ``thumbnail``: also a PNG of each output, its longest side at most that many pixels."""
        return self.request("evaluate", time=time, outputs=outputs, pointer=pointer, keys=keys, deadline=deadline, profile=profile, frames=frames, thumbnail=thumbnail)

    def read(
        self,
        output: Optional[str] = None,
        node: Optional[str] = None,
        port: Optional[str] = None,
        input: Optional[str] = None,
        format: Optional[str] = None,
        region: Optional[Dict[str, int]] = None,
        deadline: Optional[float] = None,
        file: Optional[str] = None,
    ) -> Answer:
        """An output's field (or a pinned node's port, or an input) as the session answers it: ``data``
        is base64 of a PNG (``format="png"``, the default) or of raw f32. See ``read_png`` and ``read_f32``.
        With ``file``, the PNG is written under the scene's folder and the answer has its ``path``,
        ``bytes`` and a per-channel ``summary`` instead of ``data``."""
        return self.request("read", output=output, node=node, port=port, input=input, format=format, region=region, deadline=deadline, file=file)

    def read_png(self, output: Optional[str] = None, **fields: Any) -> bytes:
        """``read`` as PNG file bytes."""
        answer = self.read(output, format="png", **fields)
        return base64.b64decode(answer["data"])

    def read_f32(self, output: Optional[str] = None, **fields: Any) -> Field:
        """``read`` as raw floats, decoded into a ``Field``."""
        return decode_f32(self.read(output, format="f32", **fields))

    def pause(self, paused: Optional[bool] = None) -> Answer:
        """Pause (True) or resume (False) the clock and frames; toggle without an argument."""
        return self.request("pause", paused=paused)

    def trace(self, x: int, y: Optional[int] = None, z: Optional[int] = None, output: Optional[str] = None, deadline: Optional[float] = None) -> Answer:
        """What each node read (``reads``) and computed (``values``) at one element."""
        return self.request("trace", x=x, y=y, z=z, output=output, deadline=deadline)

    def cancel(self, request: Any = None) -> Answer:
        """Stop this connection's running or waiting evaluations (or only the request of that id)."""
        return self.request("cancel", request=request)

    def pin(self, node: str, port: Optional[str] = None) -> Answer:
        """Keep a node's ports materialised and readable."""
        return self.request("pin", node=node, port=port)

    def unpin(self, node: str, port: Optional[str] = None) -> Answer:
        """Undo a pin."""
        return self.request("unpin", node=node, port=port)

    # State
    def write(
        self,
        node: Optional[str] = None,
        port: Optional[str] = None,
        data: Optional[str] = None,
        value: Optional[Value] = None,
        region: Optional[Dict[str, int]] = None,
        input: Optional[str] = None,
        file: Optional[str] = None,
    ) -> Answer:
        """Write into a node's state or a scene input (``node`` or ``input``): ``data`` (see
        ``encode_f32``), one ``value``, or an image ``file`` under the scene's folder."""
        if isinstance(value, tuple):
            value = list(value)
        return self.request("write", node=node, port=port, data=data, value=value, region=region, input=input, file=file)

    def snapshot(self, path: Optional[str] = None) -> Answer:
        """Save the whole world (to a file under the scene's folder, or answered as data)."""
        return self.request("snapshot", path=path)

    def restore(self, path: Optional[str] = None, data: Optional[str] = None, deadline: Optional[float] = None) -> Answer:
        """Load a snapshot; one that does not load (or passes its ``deadline``) leaves the world as it was."""
        return self.request("restore", path=path, data=data, deadline=deadline)

    def reset(self, node: Optional[str] = None) -> Answer:
        """Reset state to its declared values (one node, or all) and the clock to zero."""
        return self.request("reset", node=node)

    # Session
    def quit(self) -> Answer:
        """End this connection (the session goes on; the next request reconnects)."""
        return self.request("quit")


def main(argv: Optional[List[str]] = None) -> int:
    """``python3 entelechy_client.py [--host H] [--port P] OP [JSON-FIELDS]``: one request, its answer printed."""
    import argparse

    parser = argparse.ArgumentParser(description="Send one request to an Entelechy session.")
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("op", choices=OPERATIONS)
    parser.add_argument("fields", nargs="?", default="{}", help='the fields as a JSON object, e.g. \'{"name": "warmth", "value": 0.9}\'')
    args = parser.parse_args(argv)
    try:
        fields = json.loads(args.fields)
    except ValueError as err:
        parser.error(f"the fields are not JSON ({err}): give an object, e.g. '{{\"name\": \"warmth\", \"value\": 0.9}}'")
    if not isinstance(fields, dict):
        parser.error(f"the fields are a JSON object, e.g. '{{\"name\": \"warmth\", \"value\": 0.9}}'; got {args.fields}")
    try:
        client = Client(args.host, args.port, reconnect=False)
    except ConnectionLost as err:
        print(f"entelechy_client: {err}", file=sys.stderr)
        return 1
    try:
        print(json.dumps(client.request(args.op, **fields), indent=2))
        return 0
    except EntelechyError as err:
        print(json.dumps({"error": err.data}, indent=2), file=sys.stderr)
        return 1
    except ConnectionLost as err:
        print(f"entelechy_client: {err}", file=sys.stderr)
        return 1
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
