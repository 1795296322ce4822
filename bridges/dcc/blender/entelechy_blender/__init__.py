"""Entelechy for Blender: drive a live Entelechy session (`entelechy serve SCENE --listen`) from Blender.

Connect to a session; the scene's params become properties of ``scene.entelechy_params`` that send
``param`` when changed; pull an output into a Blender image (from ``read``, as f32); send a text
block through ``compose``; list the session's ``kernels`` and ``status``. The panel is in the 3D
Viewport's and the Image Editor's sidebar (N), tab "Entelechy"; the operators are ``entelechy.*``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional

import bpy
from bpy.props import BoolProperty, CollectionProperty, FloatProperty, FloatVectorProperty, IntProperty, PointerProperty, StringProperty

try:  # installed from the zip: the client ships inside the add-on
    from . import entelechy_client as ec
except ImportError:  # run from the repository: bridges/dcc holds the client
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
    import entelechy_client as ec  # type: ignore[no-redef]

bl_info = {
    "name": "Entelechy",
    "author": "Entelechy",
    "version": (0, 1, 0),
    "blender": (3, 0, 0),
    "location": "3D Viewport / Image Editor > Sidebar > Entelechy",
    "description": "Drive a live Entelechy session: params as properties, outputs as images, compose from text blocks",
    "category": "Interface",
}

# The one connection of this Blender process (sockets cannot live in Blender properties).
_client: Optional[ec.Client] = None
# The PropertyGroup class made for the connected scene's params, and whether values are being
# filled in from the session (then the update callbacks send nothing back).
_params_class: Optional[type] = None
_syncing = False
# The value each param last had in the session (as sent or as read), to send only changes.
_sent: Dict[str, Any] = {}


def client() -> ec.Client:
    if _client is None:
        raise RuntimeError("not connected to an Entelechy session: press Connect")
    return _client


def settings(context: bpy.types.Context) -> "EntelechySettings":
    return context.scene.entelechy


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------


class EntelechyKernel(bpy.types.PropertyGroup):
    """One kernel of the session's registry (from `kernels`)."""

    generation: IntProperty(name="Generation")  # type: ignore[valid-type]
    origin: StringProperty(name="Origin")  # type: ignore[valid-type]
    ports: StringProperty(name="Ports")  # type: ignore[valid-type]


class EntelechySettings(bpy.types.PropertyGroup):
    host: StringProperty(name="Host", default=ec.DEFAULT_HOST)  # type: ignore[valid-type]
    port: IntProperty(name="Port", default=ec.DEFAULT_PORT, min=1, max=65535)  # type: ignore[valid-type]
    connected: BoolProperty(name="Connected", default=False)  # type: ignore[valid-type]
    output: StringProperty(name="Output", description="The output to pull (empty: the first)")  # type: ignore[valid-type]
    image: StringProperty(name="Image", description="The image to pull into (empty: 'Entelechy OUTPUT')")  # type: ignore[valid-type]
    evaluate: BoolProperty(name="Evaluate first", description="Evaluate a frame before reading", default=True)  # type: ignore[valid-type]
    follow: BoolProperty(  # type: ignore[valid-type]
        name="Follow Timeline",
        description="On each frame change: send animated params, evaluate at frame / fps seconds, pull the output",
        default=False,
    )
    text: PointerProperty(name="Text", type=bpy.types.Text, description="The text block compose sends")  # type: ignore[valid-type]
    path: StringProperty(name="Document", description="The document to compose (empty: the scene)")  # type: ignore[valid-type]
    # What status answered.
    scene_name: StringProperty(name="Scene")  # type: ignore[valid-type]
    backend: StringProperty(name="Backend")  # type: ignore[valid-type]
    frame: IntProperty(name="Frame")  # type: ignore[valid-type]
    time: FloatProperty(name="Time", description="The session's clock in seconds")  # type: ignore[valid-type]
    revision: IntProperty(name="Revision")  # type: ignore[valid-type]
    paused: BoolProperty(name="Paused")  # type: ignore[valid-type]
    outputs: StringProperty(name="Outputs")  # type: ignore[valid-type]
    kernels: CollectionProperty(type=EntelechyKernel)  # type: ignore[valid-type]
    # The last thing the session said (an error, or the events of the last change).
    message: StringProperty(name="Message")  # type: ignore[valid-type]


# ---------------------------------------------------------------------------------------------
# Params as properties
# ---------------------------------------------------------------------------------------------


def _param_value(group: Any, name: str) -> Any:
    """A param property's value as `param` takes it (numbers; a list for vectors; bools as 0/1)."""
    value = getattr(group, name)
    if hasattr(value, "__len__"):
        return [float(v) for v in value]
    return int(value) if isinstance(value, bool) else value


def send_param(scene: bpy.types.Scene, name: str, changed_only: bool = False) -> bool:
    """Send one param's property value to the session (with ``changed_only``, only if it moved
    since it was last sent or read); False when the session refused it."""
    if _client is None:
        return False
    value = _param_value(scene.entelechy_params, name)
    if changed_only and _sent.get(name) == value:
        return True
    try:
        _client.param(name, value)
    except (ec.EntelechyError, ConnectionError, OSError) as err:
        scene.entelechy.message = f"param {name}: {err}"
        print(f"Entelechy: param {name}: {err}", file=sys.stderr)
        return False
    _sent[name] = value
    scene.entelechy.message = f"param {name} = {value}"
    return True


def _on_event(event: Dict[str, Any]) -> None:
    """A reconnection found a restarted session, which holds the scene's param values again: the
    panel's values are sent again, so the picture and the panel agree (before, the panel showed
    values the session no longer had)."""
    if event.get("kind") != "session_restarted":
        return
    scene = bpy.context.scene
    _sent.clear()
    refused = [name for name in param_names() if not send_param(scene, name)]
    scene.entelechy.message = f"the session restarted: the panel's params were sent again{f' (refused: {refused})' if refused else ''}"
    print(f"Entelechy: {scene.entelechy.message}", file=sys.stderr)


def _send_param(name: str):
    def update(self: Any, context: bpy.types.Context) -> None:
        if not _syncing:
            send_param(context.scene, name)

    return update


def _param_property(p: Dict[str, Any]) -> Any:
    """A Blender property for one graph param (from `graph`): f32 a float, i32 an int, bool a bool,
    vectors float vectors; a range bounds it."""
    name, kind = str(p["name"]), str(p.get("type", "f32"))
    value = list(p.get("value") or p.get("default") or [0.0])
    bounds: Dict[str, Any] = {}
    if p.get("range"):
        lo, hi = p["range"]
        bounds = {"min": lo, "max": hi}
    common = {"name": name, "update": _send_param(name), "description": f"Entelechy param `{name}` ({kind})"}
    if kind == "bool":
        return BoolProperty(default=bool(value[0]), **common)
    if kind == "i32":
        return IntProperty(default=int(value[0]), **{k: int(v) for k, v in bounds.items()}, **common)
    if len(value) == 1:
        return FloatProperty(default=float(value[0]), **bounds, **common)
    return FloatVectorProperty(size=len(value), default=[float(v) for v in value], **bounds, **common)


def _drop_params() -> None:
    global _params_class
    if hasattr(bpy.types.Scene, "entelechy_params"):
        del bpy.types.Scene.entelechy_params
    if _params_class is not None:
        bpy.utils.unregister_class(_params_class)
        _params_class = None


def build_params(scene: bpy.types.Scene, params: List[Dict[str, Any]]) -> None:
    """(Re)make ``scene.entelechy_params`` for these params and fill in the session's values."""
    global _params_class, _syncing
    _drop_params()
    annotations = {str(p["name"]): _param_property(p) for p in params}
    cls = type("EntelechyParams", (bpy.types.PropertyGroup,), {"__annotations__": annotations, "__doc__": "The session's graph params"})
    bpy.utils.register_class(cls)
    _params_class = cls
    bpy.types.Scene.entelechy_params = PointerProperty(type=cls)
    _syncing = True
    try:
        group = scene.entelechy_params
        _sent.clear()
        for p in params:
            value = list(p.get("value") or p.get("default") or [0.0])
            setattr(group, str(p["name"]), value[0] if len(value) == 1 else value)
            _sent[str(p["name"])] = _param_value(group, str(p["name"]))
    finally:
        _syncing = False


def param_names() -> List[str]:
    return [] if _params_class is None else list(_params_class.__annotations__)


# ---------------------------------------------------------------------------------------------
# Reading the session into properties
# ---------------------------------------------------------------------------------------------


def fill_status(s: EntelechySettings, status: Dict[str, Any]) -> None:
    s.scene_name = str(status.get("scene", ""))
    s.backend = str(status.get("backend", ""))
    s.frame = int(status.get("frame", 0))
    s.time = float(status.get("time", 0.0))
    s.revision = int(status.get("revision", 0))
    s.paused = bool(status.get("paused", False))
    s.outputs = ", ".join(status.get("outputs") or [])


def fill_kernels(s: EntelechySettings, kernels: List[Dict[str, Any]]) -> None:
    s.kernels.clear()
    for k in kernels:
        item = s.kernels.add()
        item.name = str(k["id"])
        item.generation = int(k.get("generation", 0))
        item.origin = str(k.get("origin", ""))
        item.ports = ", ".join(f"{p['kind']} {p['name']}: {p['type']}" for p in k.get("ports", []))


def refresh(context: bpy.types.Context, params: bool = False) -> None:
    c, s = client(), settings(context)
    fill_status(s, c.status())
    fill_kernels(s, c.kernels()["kernels"])
    if params:
        build_params(context.scene, c.graph()["params"])


def describe(err: ec.EntelechyError) -> str:
    where = f" (line {err.line}, column {err.column})" if err.line is not None else ""
    fix = f"; fix: {err.fix}" if err.fix else ""
    return f"{err.message}{where}{fix}"


def pixels_into_image(field: ec.Field, name: str) -> bpy.types.Image:
    """A float image holding the field's values exactly (rows bottom-up, as Blender keeps them)."""
    image = bpy.data.images.get(name)
    if image is not None and (tuple(image.size) != (field.width, field.height) or not image.is_float):
        bpy.data.images.remove(image)
        image = None
    if image is None:
        image = bpy.data.images.new(name, field.width, field.height, alpha=True, float_buffer=True)
    # The values are what `read` answers; shown without a view transform, as the PNG shows them.
    image.colorspace_settings.name = "Non-Color"
    image.pixels.foreach_set(field.rgba(bottom_up=True))
    image.update()
    return image


# ---------------------------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------------------------


class ENTELECHY_OT_connect(bpy.types.Operator):
    """Connect to the Entelechy session at Host:Port; its params become properties"""

    bl_idname = "entelechy.connect"
    bl_label = "Connect"

    def execute(self, context: bpy.types.Context) -> set:
        global _client
        s = settings(context)
        if _client is not None:
            _client.close()
            _client = None
        try:
            _client = ec.Client(s.host, s.port, reconnect_attempts=2, timeout=60.0, on_event=_on_event)
            refresh(context, params=True)
        except (ec.EntelechyError, ConnectionError, OSError) as err:
            _client = None
            s.connected = False
            s.message = str(err)
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        s.connected = True
        s.message = f"connected to {s.host}:{s.port} ({s.scene_name}, {len(s.kernels)} kernels, params: {', '.join(param_names()) or 'none'})"
        self.report({"INFO"}, s.message)
        return {"FINISHED"}


class ENTELECHY_OT_disconnect(bpy.types.Operator):
    """Close the connection (the session goes on)"""

    bl_idname = "entelechy.disconnect"
    bl_label = "Disconnect"

    def execute(self, context: bpy.types.Context) -> set:
        global _client
        if _client is not None:
            _client.close()
            _client = None
        _drop_params()
        settings(context).connected = False
        return {"FINISHED"}


class _Connected:
    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return _client is not None


class ENTELECHY_OT_refresh(_Connected, bpy.types.Operator):
    """Ask the session for its status, kernels and params"""

    bl_idname = "entelechy.refresh"
    bl_label = "Refresh"

    def execute(self, context: bpy.types.Context) -> set:
        try:
            refresh(context, params=True)
        except (ec.EntelechyError, ConnectionError, OSError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        return {"FINISHED"}


def pull(scene: bpy.types.Scene, time: Optional[float] = None, screen: Any = None) -> bpy.types.Image:
    """Evaluate a frame (if asked, at ``time``), read the output as f32 and put it into its image
    (shown in the Image Editors of ``screen``)."""
    s = scene.entelechy
    c = client()
    if s.evaluate or time is not None:
        c.evaluate(time=time)
    field = c.read_f32(s.output or None)
    image = pixels_into_image(field, s.image or f"Entelechy {field.name}")
    fill_status(s, c.status())
    s.message = f"pulled {field.name} ({field.width} x {field.height}, frame {field.frame}) into {image.name}"
    for area in screen.areas if screen is not None else []:
        if area.type == "IMAGE_EDITOR":
            area.spaces.active.image = image
            area.tag_redraw()
    return image


class ENTELECHY_OT_pull(_Connected, bpy.types.Operator):
    """Read an output (as f32) into a Blender image, evaluating a frame first if asked"""

    bl_idname = "entelechy.pull"
    bl_label = "Pull Output"

    def execute(self, context: bpy.types.Context) -> set:
        s = settings(context)
        try:
            pull(context.scene, screen=context.screen)
        except (ec.EntelechyError, ConnectionError, OSError, ValueError) as err:
            s.message = describe(err) if isinstance(err, ec.EntelechyError) else str(err)
            self.report({"ERROR"}, s.message)
            return {"CANCELLED"}
        return {"FINISHED"}


@bpy.app.handlers.persistent
def on_frame_change(scene: bpy.types.Scene, depsgraph: Any = None) -> None:
    """Follow the timeline: send the params whose values moved (keyframes, drivers), evaluate at the
    frame's time (frame / fps seconds) and pull the output."""
    s = scene.entelechy
    if not s.follow or _client is None:
        return
    try:
        for name in param_names():
            send_param(scene, name, changed_only=True)
        fps = scene.render.fps / (scene.render.fps_base or 1.0)
        pull(scene, time=scene.frame_current / fps, screen=getattr(bpy.context, "screen", None))
    except (ec.EntelechyError, ConnectionError, OSError, ValueError) as err:
        s.message = describe(err) if isinstance(err, ec.EntelechyError) else str(err)
        print(f"Entelechy: frame {scene.frame_current}: {s.message}", file=sys.stderr)


def _text_of(context: bpy.types.Context) -> Optional[bpy.types.Text]:
    s = settings(context)
    if s.text is not None:
        return s.text
    space = context.space_data
    return getattr(space, "text", None) if space is not None else None


class ENTELECHY_OT_compose(_Connected, bpy.types.Operator):
    """Send the text block's text through compose as the whole new text of the document"""

    bl_idname = "entelechy.compose"
    bl_label = "Compose Text"

    def execute(self, context: bpy.types.Context) -> set:
        s = settings(context)
        text = _text_of(context)
        if text is None:
            self.report({"ERROR"}, "choose a text block to compose")
            return {"CANCELLED"}
        try:
            answer = client().compose(text=text.as_string(), path=s.path or None)
        except ec.EntelechyError as err:
            s.message = describe(err)
            if err.line is not None:
                text.current_line_index = max(0, int(err.line) - 1)  # put the cursor on the line
                text.current_character = max(0, int(err.column or 1) - 1)
                text.select_end_line_index = text.current_line_index
                text.select_end_character = text.current_character
            self.report({"ERROR"}, s.message)
            return {"CANCELLED"}
        except (ConnectionError, OSError) as err:
            s.message = str(err)
            self.report({"ERROR"}, s.message)
            return {"CANCELLED"}
        kinds = ", ".join(str(e.get("kind")) for e in answer.get("events", []))
        s.message = f"composed {answer.get('path')} (version {answer.get('version')}, written {answer.get('written')}): {kinds or 'no events'}"
        refresh(context, params=True)  # the scene may declare other params now
        self.report({"INFO"}, s.message)
        return {"FINISHED"}


class ENTELECHY_OT_fetch_document(_Connected, bpy.types.Operator):
    """Load the document's text from the session into a text block (to edit, then compose)"""

    bl_idname = "entelechy.fetch_document"
    bl_label = "Fetch Document"

    def execute(self, context: bpy.types.Context) -> set:
        s = settings(context)
        try:
            doc = client().document(path=s.path or None)
        except (ec.EntelechyError, ConnectionError, OSError) as err:
            self.report({"ERROR"}, str(err))
            return {"CANCELLED"}
        text = bpy.data.texts.get(doc["path"]) or bpy.data.texts.new(doc["path"])
        text.from_string(doc["text"])
        s.text = text
        s.message = f"{doc['path']} version {doc['version']}"
        return {"FINISHED"}


# ---------------------------------------------------------------------------------------------
# The panel
# ---------------------------------------------------------------------------------------------


def draw_panel(layout: bpy.types.UILayout, context: bpy.types.Context) -> None:
    s = settings(context)
    row = layout.row(align=True)
    row.prop(s, "host", text="")
    row.prop(s, "port", text="")
    row = layout.row(align=True)
    row.operator(ENTELECHY_OT_connect.bl_idname, icon="LINKED")
    row.operator(ENTELECHY_OT_disconnect.bl_idname, icon="UNLINKED")
    if not s.connected:
        if s.message:
            layout.label(text=s.message)
        return
    box = layout.box()
    box.label(text=f"{s.scene_name}: frame {s.frame}, time {s.time:.3f} s, revision {s.revision}{', paused' if s.paused else ''} ({s.backend})")
    box.label(text=f"outputs: {s.outputs}")
    box.operator(ENTELECHY_OT_refresh.bl_idname, icon="FILE_REFRESH")
    if _params_class is not None and hasattr(context.scene, "entelechy_params"):
        box = layout.box()
        box.label(text="Params")
        for name in param_names():
            box.prop(context.scene.entelechy_params, name)
    box = layout.box()
    box.prop(s, "output")
    box.prop(s, "image")
    box.prop(s, "evaluate")
    box.prop(s, "follow")
    box.operator(ENTELECHY_OT_pull.bl_idname, icon="IMAGE_DATA")
    box = layout.box()
    box.prop(s, "text")
    box.prop(s, "path")
    row = box.row(align=True)
    row.operator(ENTELECHY_OT_fetch_document.bl_idname, icon="IMPORT")
    row.operator(ENTELECHY_OT_compose.bl_idname, icon="EXPORT")
    box = layout.box()
    box.label(text="Kernels")
    for k in s.kernels:
        box.label(text=f"{k.name} g{k.generation} ({k.origin})")
    if s.message:
        layout.label(text=s.message)


class ENTELECHY_PT_view3d(bpy.types.Panel):
    bl_label = "Entelechy"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Entelechy"

    def draw(self, context: bpy.types.Context) -> None:
        draw_panel(self.layout, context)


class ENTELECHY_PT_image(bpy.types.Panel):
    bl_label = "Entelechy"
    bl_space_type = "IMAGE_EDITOR"
    bl_region_type = "UI"
    bl_category = "Entelechy"

    def draw(self, context: bpy.types.Context) -> None:
        draw_panel(self.layout, context)


@bpy.app.handlers.persistent
def on_load(*_: Any) -> None:
    """A .blend file was opened: its scenes say connected only if this Blender is."""
    for scene in bpy.data.scenes:
        if hasattr(scene, "entelechy"):
            scene.entelechy.connected = _client is not None


classes = (
    EntelechyKernel,
    EntelechySettings,
    ENTELECHY_OT_connect,
    ENTELECHY_OT_disconnect,
    ENTELECHY_OT_refresh,
    ENTELECHY_OT_pull,
    ENTELECHY_OT_compose,
    ENTELECHY_OT_fetch_document,
    ENTELECHY_PT_view3d,
    ENTELECHY_PT_image,
)


def register() -> None:
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.entelechy = PointerProperty(type=EntelechySettings)
    bpy.app.handlers.frame_change_post.append(on_frame_change)
    bpy.app.handlers.load_post.append(on_load)


def unregister() -> None:
    global _client
    if _client is not None:
        _client.close()
        _client = None
    _drop_params()
    if on_frame_change in bpy.app.handlers.frame_change_post:
        bpy.app.handlers.frame_change_post.remove(on_frame_change)
    if on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(on_load)
    del bpy.types.Scene.entelechy
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
