"""The Python client against a real `entelechy serve --listen` (see session.py for which one).

    python3 -m unittest discover -s bridges/dcc/tests -v        # starts its own session
    ENTELECHY_PORT=7788 python3 -m unittest discover -s bridges/dcc/tests -v
"""

from __future__ import annotations

import base64
import inspect
import json
import re
import socket
import select
import struct
import time
import unittest
import zlib
from pathlib import Path
from typing import Any, Dict, List, Tuple

import session  # noqa: E402  (puts bridges/dcc on sys.path)
from entelechy_client import OPERATIONS, Client, ConnectionLost, EntelechyError, decode_f32, encode_f32  # noqa: E402

HOST, PORT, FOLDER = "127.0.0.1", 0, Path()


# The restart test's own session starts in the background while the other tests run.
OWN = session.Background()


def setUpModule() -> None:
    global HOST, PORT, FOLDER
    OWN.begin()
    HOST, PORT, FOLDER = session.shared()


def tearDownModule() -> None:
    session.stop_shared()
    OWN.remove()


def srgb(v: float) -> float:
    """sRGB's transfer function (IEC 61966-2-1), written out: the encoded value of a linear one."""
    return v * 12.92 if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055


def decode_png_rgba(png: bytes) -> Tuple[int, int, bytes]:
    """A small PNG decoder for 8-bit RGBA, non-interlaced (what `read` answers): (width, height, rgba)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, color, interlace) == (8, 6, 0), (depth, color, interlace)
        elif kind == b"IDAT":
            idat += body
    raw, stride, out = zlib.decompress(idat), width * 4, bytearray()
    prev = bytearray(stride)
    for row in range(height):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 4] if i >= 4 else 0
            b = prev[i]
            c = prev[i - 4] if i >= 4 else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return width, height, bytes(out)


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.events: List[Dict[str, Any]] = []
        self.client = Client(HOST, PORT, on_event=self.events.append)

    def tearDown(self) -> None:
        self.client.close()

    # -- every operation a method --------------------------------------------------------------

    def test_operations_are_the_servers(self) -> None:
        """The client's operations are exactly the ones the session reports (an op added to
        src/protocol/operations.ts without a method here fails this test)."""
        with self.assertRaises(EntelechyError) as caught:
            self.client.request("frobnicate")
        self.assertEqual(sorted(caught.exception.operations or []), sorted(OPERATIONS))
        index = self.client.help()["index"]["operation"]
        self.assertEqual(sorted(index), sorted(OPERATIONS))
        self.assertEqual(len(OPERATIONS), 26)

    def test_methods_take_each_operations_fields(self) -> None:
        """Each operation's method takes exactly the fields `help` lists for it, the required ones
        without a default."""
        for op in OPERATIONS:
            with self.subTest(op=op):
                method = getattr(self.client, op)
                self.assertTrue(callable(method), op)
                described = self.client.help(op)
                entry = next(e for e in described.get("entries", [described]) if e["kind"] == "operation")
                fields = {f["name"]: bool(f.get("required")) for f in entry["fields"]}
                params = inspect.signature(method).parameters
                self.assertEqual(sorted(params), sorted(fields), f"`{op}`'s method and its fields")
                for name, required in fields.items():
                    has_default = params[name].default is not inspect.Parameter.empty
                    self.assertEqual(has_default, not required, f"`{op}` field `{name}` required={required}")

    def test_every_operation_answers(self) -> None:
        """Every method once against the session, with real arguments."""
        c = self.client
        self.assertTrue(c.status()["loaded"])
        ids = [k["id"] for k in c.kernels()["kernels"]]
        self.assertIn("demo.tint@1", ids)
        tint = c.kernel("demo.tint@1")
        self.assertIn("kernel demo.tint@1", tint["source"])
        self.assertIn("rings", [n["name"] for n in c.graph()["nodes"]])
        self.assertIn("node rings", c.document()["text"])
        self.assertEqual(c.history()["path"], "scene.esn")
        with self.assertRaises(EntelechyError) as caught:  # no good version before the bad one: refused, naming the field
            c.bisect("0", "0", replay='> {"op":"status"}\n')
        self.assertEqual(caught.exception.field, "good")
        self.assertIn("index", c.help())
        self.assertIn("events", c.sync())
        self.assertEqual(c.prepare(tint["source"])["id"], "demo.tint@1")
        published = c.publish(tint["source"])
        self.assertGreater(published["generation"], tint["generation"])
        retired = c.retire("demo.tint@1", expect=published["generation"])
        self.assertIn("published", [e["kind"] for e in retired["events"]])
        self.assertEqual(c.param("warmth", 0.5)["value"], 0.5)
        self.assertEqual(c.evaluate(time=0.25)["outputs"][0]["name"], "result")
        self.assertEqual(c.read()["format"], "png")
        self.assertEqual(c.pause(True)["paused"], True)
        self.assertEqual(c.pause(False)["paused"], False)
        traced = c.trace(3, 4, output="result")["values"]
        self.assertEqual([v["node"] for v in traced], ["rings", "tint"])
        self.assertEqual(c.pin("rings")["pins"], ["rings"])
        with self.assertRaises(EntelechyError) as caught:  # pinned, but not computed until a frame runs
            c.read_f32(node="rings", port="result")
        self.assertEqual(caught.exception.data.get("request"), {"op": "evaluate"})
        c.evaluate()
        node_read = c.read_f32(node="rings", port="result", region={"x": 3, "y": 4, "width": 1, "height": 1})
        self.assertEqual(node_read.name, "rings.result")
        self.assertEqual(c.unpin("rings")["pins"], [])
        with self.assertRaises(EntelechyError) as caught:  # rings keeps no state: the answer says so
            c.write("rings", "result", data=encode_f32([[0.0]]))
        self.assertEqual(caught.exception.field, "port")
        snap = c.snapshot()
        self.assertGreater(snap["bytes"], 0)
        self.assertIn("events", c.restore(data=snap["data"]))
        self.assertIn("events", c.reset())
        self.assertEqual(c.quit(), {})

    # -- ids ---------------------------------------------------------------------------------

    def test_ids_match(self) -> None:
        for _ in range(5):
            self.client.status()
            self.assertEqual(self.client.last_answer_id, self.client._next_id)
        # The session echoes any id as given: strings and numbers, on answers and errors.
        with socket.create_connection((HOST, PORT), timeout=30) as raw:
            f = raw.makefile("rwb")
            for rid in ("a-1", 7, 3.5):
                for op in ("status", "nope"):
                    f.write(json.dumps({"id": rid, "op": op}).encode() + b"\n")
                    f.flush()
                    self.assertEqual(json.loads(f.readline())["id"], rid)

    # -- errors keep their data ----------------------------------------------------------------

    def test_param_error_carries_a_fix_that_compose_takes(self) -> None:
        with self.assertRaises(EntelechyError) as caught:
            self.client.param("count", 3)
        err = caught.exception
        self.assertIn("not a param the scene declares", str(err))
        self.assertEqual(err.op, "param")
        self.assertEqual(err.fix, {"node": "rings", "member": "count", "text": "count = 3;"})
        self.assertIn("warmth", err.get("params"))
        # Hand the fix back to compose: the document changes on disk, only that member's bytes.
        assert err.fix is not None
        answer = self.client.compose(edits=[err.fix])
        self.assertTrue(answer["written"])
        text = self.client.document()["text"]
        self.assertIn("count = 3;", text)
        if FOLDER.name:
            self.assertEqual((FOLDER / "scene.esn").read_text(), text)
        self.client.compose(edits=[{"node": "rings", "member": "count", "text": "count = 8.0;"}])

    def test_unknown_param_names_the_params(self) -> None:
        with self.assertRaises(EntelechyError) as caught:
            self.client.param("warmht", 0.2)
        self.assertIn("did you mean `warmth`", caught.exception.message)
        self.assertIn("warmth", caught.exception.get("params"))

    def test_field_errors_name_the_fields(self) -> None:
        with self.assertRaises(EntelechyError) as caught:
            self.client.request("status", bogus=1)
        self.assertEqual((caught.exception.field, caught.exception.fields), ("bogus", []))
        with self.assertRaises(EntelechyError) as caught:
            self.client.request("param", name="warmth")
        self.assertEqual(caught.exception.field, "value")
        self.assertEqual(caught.exception.fields, ["name", "value"])
        self.assertEqual(caught.exception.expected, "number|array")
        with self.assertRaises(EntelechyError) as caught:
            self.client.param("warmth", 7)
        self.assertEqual(caught.exception.expected, "0..1")

    def test_compose_error_has_line_and_column(self) -> None:
        before = self.client.document()
        bad = before["text"] + "\nnode broken: nope@1 {\n  size = 4 x 4;\n}\n"
        with self.assertRaises(EntelechyError) as caught:
            self.client.compose(text=bad)
        err = caught.exception
        self.assertEqual(err.line, before["text"].count("\n") + 2)
        self.assertEqual(err.column, 14)
        self.assertFalse(err.get("written"))
        self.assertEqual(err.diagnostics[0]["path"], "scene.esn")
        self.assertIn("nope@1", err.diagnostics[0]["message"])
        self.assertEqual(self.client.document()["version"], before["version"], "nothing was written")
        if FOLDER.name:
            self.assertEqual((FOLDER / "scene.esn").read_text(), before["text"])

    def test_help_error_lists_similar_names(self) -> None:
        with self.assertRaises(EntelechyError) as caught:
            self.client.help("statu")
        self.assertIn("status", caught.exception.similar or [])

    # -- events --------------------------------------------------------------------------------

    def test_events_are_surfaced(self) -> None:
        doc = self.client.document()
        self.client.take_events()
        self.events.clear()
        edited = re.sub(r"count = [0-9.]+;", "count = 10.0;", doc["text"])
        answer = self.client.compose(text=edited)
        kinds = [e["kind"] for e in answer["events"]]
        self.assertIn("scene_loaded", kinds)
        self.assertEqual([e["kind"] for e in self.events], kinds, "on_event saw each event")
        self.assertEqual([e["kind"] for e in self.client.take_events()], kinds, "Client.events kept them")
        self.assertEqual(list(self.client.events), [])
        self.client.compose(text=doc["text"])

    # -- read decoding -------------------------------------------------------------------------

    def test_read_f32_and_png_agree(self) -> None:
        self.client.param("warmth", 0.7)
        self.client.evaluate(time=0.5)
        f = self.client.read_f32("result")
        self.assertEqual((f.width, f.height, f.components, f.depth), (256, 256, 4, None))
        self.assertEqual(len(f.planes), 4)
        self.assertTrue(all(len(p) == 256 * 256 for p in f.planes))
        width, height, rgba = decode_png_rgba(self.client.read_png("result"))
        self.assertEqual((width, height), (256, 256))
        for x, y in ((0, 0), (17, 200), (255, 255), (128, 3)):
            value = f.at(x, y)
            # Colours are sRGB-encoded from linear values (docs/language.md); alpha is not.
            clamped = [max(0.0, min(1.0, v)) for v in value]
            want = [round(srgb(v) * 255) for v in clamped[:3]] + [round(clamped[3] * 255)]
            i = (y * 256 + x) * 4
            self.assertEqual(list(rgba[i:i + 4]), want, f"pixel {x},{y}")
        # A region reads the same values as the whole field there.
        part = self.client.read_f32("result", region={"x": 17, "y": 200, "width": 2, "height": 1})
        self.assertEqual((part.width, part.height), (2, 1))
        self.assertEqual(part.at(0, 0), f.at(17, 200))
        self.assertEqual(part.at(1, 0), f.at(18, 200))
        # Bottom-up RGBA rows (Blender's order): the first row is the field's last.
        flat = f.rgba(bottom_up=True)
        self.assertEqual(tuple(flat[0:4]), f.at(0, 255))
        self.assertEqual(tuple(flat[(255 * 256 + 5) * 4:(255 * 256 + 5) * 4 + 4]), f.at(5, 0))
        self.assertEqual(tuple(f.rgba()[0:4]), f.at(0, 0))

    def test_param_changes_what_read_answers(self) -> None:
        self.client.param("warmth", 0.1)
        self.client.evaluate(time=0.5)
        cool = self.client.read_f32().at(10, 10)
        self.client.param("warmth", 0.9)
        self.client.evaluate(time=0.5)
        warm = self.client.read_f32().at(10, 10)
        self.assertAlmostEqual(warm[0] / cool[0], (0.5 + 0.9) / (0.5 + 0.1), places=4)
        self.assertEqual(self.client.status()["params"]["warmth"], [0.9])

    def test_decode_f32_is_little_endian_component_major(self) -> None:
        data = encode_f32([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(base64.b64decode(data)[:4], struct.pack("<f", 1.0))
        field = decode_f32({"format": "f32", "width": 2, "height": 1, "components": 2, "data": data, "name": "x"})
        self.assertEqual((field.at(0), field.at(1)), ((1.0, 3.0), (2.0, 4.0)))

    # -- reconnecting --------------------------------------------------------------------------

    def test_reconnects_after_quit_closes_the_door(self) -> None:
        self.assertEqual(self.client.connects, 1)
        self.assertEqual(self.client.quit(), {})
        self.assertFalse(self.client.connected)
        self.assertTrue(self.client.status()["loaded"])
        self.assertEqual(self.client.connects, 2)
        self.assertEqual(self.client.restarts, 0, "the same session: nothing was lost")
        self.assertFalse([e for e in self.client.events if e.get("kind") == "session_restarted"])

    def test_reconnects_when_the_server_closed_the_connection(self) -> None:
        """The server closes the client's connection behind its back (a `quit` written straight to
        its socket); the next request, even one that changes the world, goes out on a new one."""
        sock = self.client._sock
        assert sock is not None
        sock.sendall(b'{"op":"quit"}\n')
        # The door answers {} and closes; wait for that (the answer, then the close right after it).
        select.select([sock], [], [], 30)
        time.sleep(0.3)
        answer = self.client.param("warmth", 0.4)
        self.assertEqual(answer["value"], 0.4)
        self.assertEqual(self.client.connects, 2)

    def test_a_safe_request_goes_again_when_the_connection_drops_under_it(self) -> None:
        """The door closes while `status` is on its way (a `quit` written just before it): whether
        the client sees the close before sending or while waiting, `status` changes nothing, so it
        is sent again on a new connection and answered."""
        sock = self.client._sock
        assert sock is not None
        sock.sendall(b'{"op":"quit"}\n')
        self.assertTrue(self.client.status()["loaded"])
        self.assertEqual(self.client.connects, 2)

    def test_survives_a_server_restart(self) -> None:
        """A session of its own: stopped (the connection drops) and started again on the same port."""
        own = OWN.wait()
        try:
            told: List[Dict[str, Any]] = []
            client = Client(own.host, own.port, reconnect_attempts=3, reconnect_delay=0.1, on_event=told.append)
            self.assertTrue(client.status()["loaded"])
            self.assertEqual(client.param("warmth", 0.75)["value"], 0.75)
            own.stop()
            with self.assertRaises(ConnectionLost):  # nobody listens now
                client.status()
            own.start(port=client.port)
            self.assertEqual(client.status()["params"]["warmth"], [0.5], "a new session: the scene's value again")
            self.assertEqual(client.connects, 2)
            self.assertEqual(client.restarts, 1)
            restarted = [e for e in told if e.get("kind") == "session_restarted"]
            self.assertEqual(len(restarted), 1, "the restart is told once, as an event")
            self.assertIn("send again what you had set", restarted[0]["message"])
            self.assertEqual(client.param("warmth", 0.25)["value"], 0.25)
            self.assertTrue(client.status()["loaded"])
            client.close()
        finally:
            own.remove()

    def test_connection_refused_says_how_to_start_a_session(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            free = s.getsockname()[1]
        with self.assertRaises(ConnectionLost) as caught:
            Client("127.0.0.1", free, reconnect_attempts=1)
        self.assertIn("entelechy serve SCENE --listen", str(caught.exception))

    def test_the_command_line_says_what_is_wrong_without_a_traceback(self) -> None:
        import contextlib
        import io
        from entelechy_client import main
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            free = s.getsockname()[1]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(main(["--port", str(free), "status"]), 1)
            for fields in ("notjson", "[1]"):
                with self.assertRaises(SystemExit) as caught:
                    main(["--port", str(PORT), "param", fields])
                self.assertEqual(caught.exception.code, 2)
        said = err.getvalue()
        self.assertIn("cannot connect to an Entelechy session", said)
        self.assertIn("the fields are not JSON", said)
        self.assertIn("the fields are a JSON object", said)
        self.assertNotIn("Traceback", said)


if __name__ == "__main__":
    unittest.main()
