"""A URDF file compiled into a `Model`: `rigidsim.loaders.urdf` translates it into an MJCF tree, the MJCF
compiler (`rigidsim.loaders.mjcf`) compiles that; MJCF advice in its errors is put in URDF terms."""

from __future__ import annotations

from pathlib import Path

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf import load_mjcf_root
from rigidsim.loaders.urdf import urdf_to_mjcf
from rigidsim.loaders.xmlsafe import parse_xml
from rigidsim.model import Model


def load_urdf(path) -> Model:
    """Load a URDF file into a compiled `Model` (through the MJCF compiler)."""
    p = Path(path)
    root = parse_xml(p)
    basedir = p.resolve().parent
    mjcf = urdf_to_mjcf(root, str(path), basedir)
    try:
        return load_mjcf_root(mjcf, str(path), basedir)
    except InputError as e:
        text = str(e)
        if _SHELL_HINT not in text:
            raise
        # MJCF's remedy (<mesh inertia="shell">) has no URDF spelling: say what a URDF user can change
        msg = text[len(e.where) + 2:] if e.where and text.startswith(e.where + ": ") else text
        raise InputError(msg.replace(_SHELL_HINT, _URDF_VOLUME_HINT), where=e.where) from None


_SHELL_HINT = "try inertia='shell'"
_URDF_VOLUME_HINT = (
    "MuJoCo refuses it too, with or without an <inertial> on the link. A mesh this small is usually in the "
    "wrong units or scaled twice: check the <mesh scale> and the file's units (a file in metres needs no "
    "scale=\"0.001 0.001 0.001\"); or replace the <geometry> with a primitive (<box>, <cylinder>, <sphere>) "
    "of the same size. To keep the mesh as a thin shell, convert the robot to MJCF and give the mesh asset "
    "inertia=\"shell\"")
