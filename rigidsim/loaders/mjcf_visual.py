"""What rigidsim reads and does not render: <visual>, textures, materials, cameras and lights.

None of it reaches the `Model`, but a scene MuJoCo 4.0 refuses is refused here too, with file and line:
the attribute rules (`mjcf_attrs`), unique names, the references MuJoCo resolves when it compiles (a
geom's, site's, tendon's or skin's material, a material's or light's texture, a camera's or light's target
body) and the checks MuJoCo makes on these elements (builtin texture sizes, texture files, camera fovy).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Dict, List, Tuple

from rigidsim.loaders import inputs
from rigidsim.loaders import mjcf_attrs as VA


class Names:
    """The visual names a scene defines and the references its elements make, checked at the end of a read."""

    def __init__(self):
        self.defined: Dict[str, Dict[str, object]] = {"material": {}, "texture": {}, "camera": {}, "light": {}}
        self.uses: List[Tuple[object, str, str, str]] = []  # (element, kind, name, attribute)


def read_visual(rd, el) -> None:
    """<visual>: each child once, known attributes with their arity, znear and realtime positive."""
    rd.check(el, "visual")
    seen = set()
    for ch in rd.children(el):
        rows = VA.TABLE.get("visual/" + ch.tag)
        if rows is None:
            rd.fail(ch, f"unknown element <{ch.tag}> in <visual>")
        if ch.tag in seen:
            rd.fail(ch, f"<{ch.tag}> appears more than once in <visual>")
        seen.add(ch.tag)
        for a in ch.attrib:
            if a not in rows and a != "_src":
                rd.fail(ch, f"unknown attribute '{a}' in <{ch.tag}>")
        for c in rd.children(ch):
            rd.fail(c, f"unknown element <{c.tag}> in <{ch.tag}>")
        VA.validate(ch, "visual/" + ch.tag, rd.where(ch))
        for a in {"map": ("znear",), "global": ("realtime",)}.get(ch.tag, ()):
            if ch.get(a) is not None and float(ch.get(a).split()[0]) <= 0:
                rd.fail(ch, f"attribute '{a}' of <{ch.tag}> must be strictly positive")


def _define(rd, el, kind: str, name: str) -> None:
    if not name:
        return
    if name in rd.names.defined[kind]:
        rd.fail(el, f"repeated {kind} name '{name}'")
    rd.names.defined[kind][name] = el


def _int(el, attr: str, default: int) -> int:
    t = el.get(attr)
    return default if t is None else int(t.split()[0])


def read_texture(rd, el) -> None:
    """A texture's name, its builtin size and channels, its grid layout and the files it names."""
    files = [el.get(a) for a in ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")
             if el.get(a)]
    name = el.get("name") or (Path(el.get("file").replace("\\", "/")).stem if el.get("file") else "")
    kind = el.get("type", "cube")
    if not name and kind != "skybox":
        rd.fail(el, f"a {kind} <texture> needs a name (or a file to take it from)")
    _define(rd, el, "texture", name)
    builtin = el.get("builtin", "none")
    if builtin != "none":
        if _int(el, "width", 0) <= 0:
            rd.fail(el, f"builtin texture '{name}' needs a positive 'width'")
        if kind == "2d" and _int(el, "height", 0) <= 0:
            rd.fail(el, f"builtin 2d texture '{name}' needs a positive 'height'")
        if _int(el, "nchannel", 3) != 3:
            rd.fail(el, f"builtin texture '{name}' must have 3 channels (nchannel)")
    elif not files:
        rd.fail(el, f"texture '{name}' has neither a builtin pattern nor a file")
    elif kind == "2d" and not el.get("file"):
        rd.fail(el, f"2d texture '{name}' cannot be read from separate files; give 'file'")
    layout = el.get("gridlayout")
    if layout is not None:
        gs = [int(t) for t in el.get("gridsize", "1 1").split()]
        if len(layout) != gs[0] * gs[1]:
            rd.fail(el, f"texture '{name}': gridlayout '{layout}' must have gridsize's {gs[0] * gs[1]} characters")
    c = rd.scene.compiler
    d = Path(c.get("texturedir") or "")
    if not d.is_absolute():
        d = Path(rd.scene.basedir) / d
    for f in files:
        f = f.replace("\\", "/")
        p = Path(Path(f).name if c.get("strippath") else f)
        if not inputs.is_file(p if p.is_absolute() else d / p):
            rd.fail(el, f"texture file '{f}' not found (looked for {p if p.is_absolute() else d / p})")


def read_material(rd, el) -> None:
    if not el.get("name"):
        rd.fail(el, "<material> needs a name")
    _define(rd, el, "material", el.get("name", ""))
    tex = rd.cls(el, None).spec("material")
    if el.get("texture") is not None:
        tex["texture"] = el.get("texture")
    if el.get("rgba") is not None:
        tex["rgba"] = rd.val(el, "rgba")
    rd.scene.materials.append((el.get("name", ""), list(tex["rgba"])))
    if tex["texture"]:
        rd.names.uses.append((el, "texture", tex["texture"], "texture"))
    for ch in rd.children(el):
        rd.names.uses.append((ch, "texture", ch.get("texture", ""), "texture"))


def read_skin(rd, el) -> None:
    """A skin's material and the bodies its bones name (in <bone> or in its .skn file) must exist."""
    note_material(rd, el, None)
    for bone in rd.children(el):
        rd.names.uses.append((bone, "body", bone.get("body", ""), "body"))
    if el.get("file"):
        d = Path(rd.scene.compiler.get("meshdir") or "")
        p = Path(el.get("file").replace("\\", "/"))
        p = p if p.is_absolute() else (d if d.is_absolute() else Path(rd.scene.basedir) / d) / p
        try:
            bones = skin_bones(inputs.read_bytes(p))
        except OSError:
            rd.fail(el, f"skin file '{el.get('file')}' not found (looked for {p})")
        except (struct.error, UnicodeDecodeError, ValueError):
            rd.fail(el, f"skin file '{el.get('file')}' is not a MuJoCo .skn file")
        for b in bones:
            rd.names.uses.append((el, "body", b, "file"))


def skin_bones(data: bytes) -> List[str]:
    """The body names of a binary .skn skin's bones (sizes, vertices, texcoords, faces, then per bone a
    40-byte name, bind pose and vertex weights)."""
    nvert, ntex, nface, nbone = struct.unpack_from("<4i", data, 0)
    off = 16 + 4 * (3 * nvert + 2 * ntex + 3 * nface)
    names = []
    for _ in range(nbone):
        names.append(data[off:off + 40].split(b"\0")[0].decode())
        off += 40 + 4 * 7
        (nv,) = struct.unpack_from("<i", data, off)
        off += 4 + 8 * nv
    if off != len(data):
        raise ValueError("size mismatch")
    return names


def note_material(rd, el, spec: dict) -> None:
    """The material a geom, site, tendon or skin uses (its own or its class's) must exist."""
    m = el.get("material") if spec is None else spec.get("material", "")
    if m:
        rd.names.uses.append((el, "material", m, "material"))


def read_camera(rd, el, childclass) -> None:
    _define(rd, el, "camera", el.get("name", ""))
    spec = rd.cls(el, childclass).spec("camera")
    read_camera_spec(spec, el)
    if spec["fovy"] >= 180:
        rd.fail(el, f"attribute 'fovy' of <camera> is {spec['fovy']:g}: a field of view must be under 180 degrees")
    if spec["intrinsic"] and not spec["sensorsize"]:
        rd.fail(el, "<camera> focal or principal point given without 'sensorsize'")
    if el.get("target"):  # an empty target is no target (MuJoCo: targetbodyid -1)
        rd.names.uses.append((el, "body", el.get("target"), "target"))


def read_light(rd, el, childclass) -> None:
    _define(rd, el, "light", el.get("name", ""))
    spec = rd.cls(el, childclass).spec("light")
    read_light_spec(spec, el)
    if el.get("directional") is not None and el.get("type") is not None:
        rd.fail(el, "<light> can have 'directional' or 'type', not both")
    if not any(spec["dir"]):
        rd.fail(el, "<light> has a zero direction ('dir')")
    if spec["texture"]:
        rd.names.uses.append((el, "texture", spec["texture"], "texture"))
    if el.get("target"):  # an empty target is no target (MuJoCo: targetbodyid -1)
        rd.names.uses.append((el, "body", el.get("target"), "target"))


def check_refs(rd) -> None:
    """Every material, texture and target body named by this scene's own elements exists."""
    bodies = {b.name for b in rd.scene.bodies if b.name} | {"world"}
    for el, kind, name, attr in rd.names.uses:
        known = bodies if kind == "body" else rd.names.defined[kind]
        if name not in known:
            rd.fail(el, f"attribute '{attr}' of <{el.tag}> names {kind} '{name}', which does not exist")


# default-class specs of the visual elements (`mjcf_defaults.KINDS`)
def camera_defaults() -> dict:
    return dict(fovy=45.0, intrinsic=False, sensorsize=False)


def read_camera_spec(spec: dict, el, filename: str = "") -> None:
    if el.get("fovy") is not None:
        spec["fovy"] = float(el.get("fovy").split()[0])
    if any(el.get(a) is not None for a in ("focal", "focalpixel", "principal", "principalpixel")):
        spec["intrinsic"] = True
    if el.get("sensorsize") is not None:
        spec["sensorsize"] = True


def light_defaults() -> dict:
    return dict(texture="", dir=[0.0, 0.0, -1.0])


def read_light_spec(spec: dict, el, filename: str = "") -> None:
    if el.get("texture") is not None:
        spec["texture"] = el.get("texture")
    if el.get("dir") is not None:
        spec["dir"] = [float(t) for t in el.get("dir").split()]


def material_defaults() -> dict:
    return dict(texture="", rgba=[1.0, 1.0, 1.0, 1.0])


def read_material_spec(spec: dict, el, filename: str = "") -> None:
    if el.get("texture") is not None:
        spec["texture"] = el.get("texture")
    if el.get("rgba") is not None:
        spec["rgba"] = [float(t) for t in el.get("rgba").split()]
