"""The Blender add-on, headless, against a real session:

    BLENDER_USER_SCRIPTS=$(mktemp -d) blender -b --factory-startup --python-exit-code 1 \\
        --python bridges/dcc/tests/blender_addon_test.py -- --port PORT [--host H] [--scene-dir DIR]

It builds the add-on's zip, installs and enables it the way a user does (Preferences > Add-ons >
Install), and drives it through its operators and properties, checking each step against what
the session answers a client of its own. Each check prints `CHECK ok NAME` or
`CHECK not ok NAME` and then `CHECK-DETAIL "what went wrong"` (a JSON string); the last line is `CHECKS DONE passed=N failed=M`, and the exit status
is 1 when any failed. Without --scene-dir the documents are checked through `document` only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import bpy

HERE = Path(__file__).resolve().parent
DCC = HERE.parent
sys.path.insert(0, str(DCC))  # the test's own client (not the add-on: that one is installed from the zip)

from entelechy_client import Client, Field  # noqa: E402


def build_zip(out: Path) -> Path:
    """bridges/dcc/blender/build_zip.py's build (loaded by path, so the repository's add-on folder
    never lands on sys.path and the add-on Blender imports is the installed one)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_zip", DCC / "blender" / "build_zip.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build(out)

results: List[Tuple[str, bool, str]] = []

# What the compose step adds to the scene: two params of other types, and a ramp output that is
# neither square nor symmetric (the rings are symmetric under flips: a ramp shows the row order).
MARK = "// added by blender_addon_test.py"
ADDED = f"""
{MARK}
param shade: vec3 = vec3(0.25, 0.5, 0.75);
param steps: i32 = 3 range 1..9;

kernel test.ramp@1 {{
  out result: field2<vec4>;
  each (x, y) {{
    result = vec4((x + 0.5) / width, (y + 0.5) / height, 0.25, 1.0);
  }}
}}

node ramp: test.ramp@1 {{
  size = 64 x 32;
}}

output ramp <- ramp.result;
"""


def check(name: str, ok: bool, detail: str = "") -> bool:
    results.append((name, ok, detail))
    print(f"CHECK {'ok' if ok else 'not ok'} {name}", flush=True)
    if not ok:
        print(f"CHECK-DETAIL {json.dumps(detail)}", flush=True)
    return ok


def step(name: str, body: Callable[[], Optional[str]]) -> None:
    """A check whose body returns None when it holds, else what went wrong (exceptions fail it)."""
    try:
        problem = body()
    except Exception as err:  # noqa: BLE001 - any failure is a failed check, reported with its trace
        problem = f"{type(err).__name__}: {err}\n{traceback.format_exc()}"
    check(name, problem is None, problem or "")


def close(a: float, b: float, tol: float = 1e-6) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def image_pixel(image: Any, x: int, y: int) -> Tuple[float, ...]:
    """Pixel (x, y) of a Blender image, y counted from the top (as the field's rows are)."""
    w, h = image.size
    i = ((h - 1 - y) * w + x) * 4
    return tuple(image.pixels[i:i + 4])


def same_pixels(image: Any, field: Field, points: List[Tuple[int, int]]) -> Optional[str]:
    for x, y in points:
        got, want = image_pixel(image, x, y), field.at(x, y)
        if len(want) == 4 and not all(close(a, b) for a, b in zip(got, want)):
            return f"pixel {x},{y}: image {got} vs read {want}"
    return None


def main() -> None:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default=os.environ.get("ENTELECHY_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("ENTELECHY_PORT", "7788")))
    parser.add_argument("--scene-dir", default=os.environ.get("ENTELECHY_SCENE_DIR", ""))
    args = parser.parse_args(argv)
    folder = Path(args.scene_dir) if args.scene_dir else None
    direct = Client(args.host, args.port)  # the test's own view of the session
    scene = bpy.context.scene
    points = [(0, 0), (37, 12), (128, 128), (255, 255), (3, 250)]

    # -- install the add-on as a user does --------------------------------------------------------
    def install() -> Optional[str]:
        if not os.environ.get("BLENDER_USER_SCRIPTS"):
            print("note: BLENDER_USER_SCRIPTS is not set: the add-on installs into your own Blender config")
        built = Path(tempfile.mkdtemp(prefix="entelechy-addon-"))
        try:
            zip_path = build_zip(built / "entelechy_blender.zip")
            bpy.ops.preferences.addon_install(filepath=str(zip_path), overwrite=True)
        finally:
            shutil.rmtree(built, ignore_errors=True)
        bpy.ops.preferences.addon_enable(module="entelechy_blender")
        if "entelechy_blender" not in bpy.context.preferences.addons:
            return "the add-on is not enabled"
        import entelechy_blender  # noqa: F401
        where = Path(entelechy_blender.__file__).parent
        if not (where / "entelechy_client.py").exists():
            return f"the client did not ship in the add-on ({where})"
        for op in ("connect", "disconnect", "refresh", "pull", "compose", "fetch_document"):
            if not hasattr(bpy.ops.entelechy, op):
                return f"no operator entelechy.{op}"
        return None if hasattr(scene, "entelechy") else "no scene.entelechy settings"

    step("install the zip and enable the add-on", install)
    if not results[-1][1]:
        return

    settings = scene.entelechy
    settings.host = args.host
    settings.port = args.port

    # -- connect: status, kernels and params --------------------------------------------------------
    def connect() -> Optional[str]:
        if bpy.ops.entelechy.connect() != {"FINISHED"}:
            return "connect did not finish"
        return None if settings.connected else "not connected"

    step("connect to the session", connect)
    if not results[-1][1]:
        return

    def status_and_kernels() -> Optional[str]:
        status = direct.status()
        kernels = sorted(k["id"] for k in direct.kernels()["kernels"])
        listed = sorted(k.name for k in settings.kernels)
        if listed != kernels or not listed:
            return f"kernels {listed} vs {kernels}"
        tint = settings.kernels["demo.tint@1"]
        if "in warmth: f32" not in tint.ports or tint.origin != "kernels.esn":
            return f"demo.tint@1 shows ports {tint.ports!r}, origin {tint.origin!r}"
        if (settings.scene_name, settings.revision, settings.backend) != (status["scene"], status["revision"], status["backend"]):
            return f"status {settings.scene_name, settings.revision, settings.backend} vs {status}"
        return None if settings.outputs == ", ".join(status["outputs"]) else f"outputs {settings.outputs!r}"

    step("kernels and status are listed", status_and_kernels)

    def params_appear() -> Optional[str]:
        if not hasattr(scene, "entelechy_params"):
            return "no scene.entelechy_params"
        want = direct.status()["params"]["warmth"][0]
        got = scene.entelechy_params.warmth
        rna = scene.entelechy_params.bl_rna.properties["warmth"]
        if (rna.hard_min, rna.hard_max) != (0.0, 1.0):
            return f"warmth's range {rna.hard_min}..{rna.hard_max}, the scene says 0..1"
        return None if close(got, want) else f"warmth {got} vs the session's {want}"

    step("the scene's params appear as properties", params_appear)

    # -- pull an output into an image ----------------------------------------------------------------
    before: List[Any] = []

    def pull() -> Optional[str]:
        if bpy.ops.entelechy.pull() != {"FINISHED"}:
            return "pull did not finish"
        image = bpy.data.images.get("Entelechy result")
        if image is None:
            return "no image 'Entelechy result'"
        if tuple(image.size) != (256, 256):
            return f"image size {tuple(image.size)}"
        field = direct.read_f32("result")  # the same frame: nothing evaluated since
        before.append(field)
        return same_pixels(image, field, points)

    step("pull the output into an image (pixels equal read's f32)", pull)

    # -- a param changed in Blender is sent to the session ---------------------------------------------
    def param_sent() -> Optional[str]:
        target = 0.8 if close(scene.entelechy_params.warmth, 0.2) else 0.2
        scene.entelechy_params.warmth = target
        value = direct.status()["params"]["warmth"][0]
        if not close(value, target):
            return f"the session's warmth is {value} after setting {target} in Blender"
        if bpy.ops.entelechy.pull() != {"FINISHED"}:
            return "pull did not finish"
        image = bpy.data.images["Entelechy result"]
        field = direct.read_f32("result")
        problem = same_pixels(image, field, points)
        if problem:
            return problem
        old, new = before[0].at(37, 12), field.at(37, 12)
        # tint: red = src.x * (0.5 + warmth); blue = src.z * (1.5 - warmth).
        if old[0] == new[0] or old[2] == new[2]:
            return f"the image did not change: {old} then {new}"
        return None

    step("changing a param property sends param (session and image change)", param_sent)

    # -- a restarted session gets the panel's values again ------------------------------------------
    def resent_after_restart() -> Optional[str]:
        import entelechy_blender
        if entelechy_blender._client.on_event is not entelechy_blender._on_event:
            return "the add-on's client does not hear session events"
        panel = scene.entelechy_params.warmth
        direct.param("warmth", 0.5 if not close(panel, 0.5) else 0.3)  # as a restarted session holds the scene's value
        entelechy_blender._on_event({"kind": "session_restarted", "session": "new", "was": "old"})
        value = direct.status()["params"]["warmth"][0]
        if not close(value, panel):
            return f"after the restart the session's warmth is {value}, the panel's {panel}"
        return None if "the session restarted" in settings.message else f"message {settings.message!r}"

    step("a restarted session is sent the panel's params again", resent_after_restart)

    # -- compose from a text block ------------------------------------------------------------------
    def compose() -> Optional[str]:
        if bpy.ops.entelechy.fetch_document() != {"FINISHED"}:
            return "fetch_document did not finish"
        text = settings.text
        doc = direct.document()
        if text is None or text.as_string().rstrip("\n") != doc["text"].rstrip("\n"):
            return "the text block does not hold the document"
        count = "count = 6.0;" if "count = 5.0;" in doc["text"] else "count = 5.0;"
        field = direct.read_f32("result")  # before the compose
        edited = re.sub(r"count = [0-9.]+;", count, doc["text"].split(MARK)[0].rstrip("\n") + "\n")
        edited += ADDED
        text.from_string(edited)
        if bpy.ops.entelechy.compose() != {"FINISHED"}:
            return "compose did not finish"
        after = direct.document()
        if "test.ramp@1" not in after["text"] or count not in after["text"]:
            return "the session's document did not change"
        if folder is not None and (folder / "scene.esn").read_text() != after["text"]:
            return "scene.esn on disk did not change"
        if "scene_loaded" not in settings.message:
            return f"no scene_loaded event in {settings.message!r}"
        bpy.ops.entelechy.pull()
        changed = direct.read_f32("result")
        if changed.at(37, 12) == field.at(37, 12):
            return f"the output did not change with the new count: {field.at(37, 12)} then {changed.at(37, 12)}"
        return same_pixels(bpy.data.images["Entelechy result"], changed, points)

    step("compose a text block (document written, scene reloaded, image changed)", compose)

    def new_params() -> Optional[str]:
        group = scene.entelechy_params
        params = direct.status()["params"]
        if list(group.shade) != params.get("shade") or [group.steps] != params.get("steps"):
            return f"shade {tuple(group.shade)}, steps {group.steps}; the session's: {params}"
        shade, steps = ([1.0, 0.5, 0.0], 7) if params["steps"] != [7] else ([0.0, 0.5, 1.0], 2)
        group.shade = shade
        group.steps = steps
        params = direct.status()["params"]
        if params.get("shade") != shade or params.get("steps") != [steps]:
            return f"the session's params: {params} after setting shade {shade}, steps {steps}"
        return None

    def pull_ramp() -> Optional[str]:
        settings.output = "ramp"
        try:
            if bpy.ops.entelechy.pull() != {"FINISHED"}:
                return "pull did not finish"
        finally:
            settings.output = ""
        image = bpy.data.images.get("Entelechy ramp")
        if image is None or tuple(image.size) != (64, 32):
            return f"image {image and tuple(image.size)}"
        field = direct.read_f32("ramp")
        corners = [(0, 0), (63, 0), (0, 31), (63, 31), (10, 20)]
        problem = same_pixels(image, field, corners)
        if problem:
            return problem
        # Row 0 of the field is the top of the image: Blender keeps rows bottom-up.
        top_left = image_pixel(image, 0, 0)
        if not (close(top_left[0], 0.5 / 64) and close(top_left[1], 0.5 / 32)):
            return f"the top-left pixel is {top_left}"
        return None if close(image.pixels[1], 31.5 / 32) else f"Blender's first pixel (bottom-left) is {tuple(image.pixels[0:4])}"

    step("pull another output: a 64 x 32 ramp, rows the right way up", pull_ramp)

    step("params a compose added appear and send param (vec3, i32)", new_params)

    def compose_error() -> Optional[str]:
        text = settings.text
        good = text.as_string()
        version = direct.document()["version"]
        text.from_string(good + "\nnode broken: nope@1 {\n  size = 4 x 4;\n}\n")
        line = good.count("\n") + 2
        try:
            bpy.ops.entelechy.compose()
            return "compose of a bad text finished"
        except RuntimeError as err:
            if "nope@1" not in str(err) or f"line {line}, column 14" not in str(err):
                return f"the error says {err}"
        if text.current_line_index != line - 1 or text.current_character != 13:
            return f"the cursor is at {text.current_line_index}:{text.current_character}, not on the error"
        if direct.document()["version"] != version:
            return "a refused compose changed the document"
        text.from_string(good)
        return None

    step("a refused compose reports line and column and puts the cursor there", compose_error)

    def follow_timeline() -> Optional[str]:
        group = scene.entelechy_params
        scene.render.fps, scene.render.fps_base = 24, 1.0
        scene.frame_set(1)
        group.warmth = 0.1
        group.keyframe_insert("warmth", frame=1)
        group.warmth = 0.9
        group.keyframe_insert("warmth", frame=11)
        settings.follow = True
        try:
            for frame in (11, 6):
                scene.frame_set(frame)  # the animation sets warmth: no update callback runs
                status = direct.status()
                if not close(status["params"]["warmth"][0], group.warmth):
                    return f"frame {frame}: the session's warmth {status['params']['warmth']} vs the keyframed {group.warmth}"
                if not close(status["time"], frame / 24):
                    return f"frame {frame}: the session's time {status['time']}, not {frame / 24}"
                if not close(settings.time, status["time"]) or settings.frame != status["frame"]:
                    return f"frame {frame}: the panel shows time {settings.time}, frame {settings.frame}"
                problem = same_pixels(bpy.data.images["Entelechy result"], direct.read_f32("result"), points)
                if problem:
                    return f"frame {frame}: {problem}"
            if close(group.warmth, 0.9) or close(group.warmth, 0.1):
                return f"warmth at frame 6 is {group.warmth}: not between its keys"
        finally:
            settings.follow = False
            scene.animation_data_clear()  # the keys live on the scene (data path entelechy_params.warmth)
        return None

    step("follow the timeline: keyframed params sent, frames evaluated at frame / fps", follow_timeline)

    def refresh_and_disconnect() -> Optional[str]:
        direct.evaluate()
        if bpy.ops.entelechy.refresh() != {"FINISHED"}:
            return "refresh did not finish"
        status = direct.status()
        if settings.frame != status["frame"] or settings.revision != status["revision"]:
            return f"frame {settings.frame} revision {settings.revision} vs {status['frame']} {status['revision']}"
        if bpy.ops.entelechy.disconnect() != {"FINISHED"} or settings.connected:
            return "still connected"
        return None

    step("refresh follows the session; disconnect", refresh_and_disconnect)

    def disable() -> Optional[str]:
        bpy.ops.preferences.addon_disable(module="entelechy_blender")
        if hasattr(bpy.types.Scene, "entelechy") or hasattr(bpy.types.Scene, "entelechy_params"):
            return "scene properties left behind"
        left = [h.__name__ for h in bpy.app.handlers.frame_change_post if "entelechy" in (h.__module__ or "")]
        left += [h.__name__ for h in bpy.app.handlers.load_post if "entelechy" in (h.__module__ or "")]
        if left or hasattr(bpy.ops.entelechy, "connect") and "entelechy.connect" in dir(bpy.types):
            return f"handlers left behind: {left}"
        return None

    step("disable the add-on: nothing left behind", disable)
    direct.close()


try:
    main()
except Exception:  # noqa: BLE001
    check("the test script ran", False, traceback.format_exc())
failed = sum(1 for _, ok, _ in results if not ok)
print(f"CHECKS DONE passed={len(results) - failed} failed={failed}", flush=True)
if failed:
    sys.exit(1)
