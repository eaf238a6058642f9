"""Scene loaders: MJCF and URDF files compile into a numpy `Model`.

The format is taken from the root element (<mujoco> or <robot>), not only
from the file extension. A bare name that is not a file is looked up among
the bundled scenes (`rigidsim scenes` lists them). `load_scene` reuses the
Model compiled last time while its input files are unchanged
(`model_cache`; ``RIGIDSIM_MODEL_CACHE=0`` turns that off).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rigidsim.errors import InputError
from rigidsim.model import Model
from rigidsim.loaders import inputs, model_cache
from rigidsim.loaders.xmlsafe import parse_xml


def resolve_scene(scene: str) -> Path:
    """The file a SCENE argument names: a path, or the name of a bundled scene."""
    p = Path(scene)
    if p.exists():
        return p
    from rigidsim.bundled import find_scene, scene_names

    found = find_scene(scene)
    if found is not None:
        return found
    names = scene_names()
    import difflib

    close = difflib.get_close_matches(scene, names, n=1)
    hint = f" Did you mean the bundled scene '{close[0]}'?" if close else (
        f" Bundled scenes: {', '.join(names)}." if names else "")
    raise InputError(f"scene file not found: {scene}.{hint}")


def load_scene(scene: str | Path) -> Model:
    """Load an MJCF or URDF scene file (or a bundled scene by name) into a Model: the cached one while
    the files it was compiled from are unchanged, else a fresh compile (then cached)."""
    path = resolve_scene(str(scene))
    with np.errstate(all="ignore"):  # a scene of huge numbers (MuJoCo accepts 1e308) never prints numpy warnings
        if not model_cache.enabled():
            return _load(scene, path)
        model = model_cache.load(path, str(scene))
        if model is None:
            with inputs.recording() as read:
                model = _load(scene, path)
            model_cache.store(path, model, read)
        return model


def _load(scene, path: Path) -> Model:
    root = parse_xml(path)
    tag = root.tag if isinstance(root.tag, str) else ""
    if tag == "mujoco":
        from rigidsim.loaders.mjcf import load_mjcf_root

        model = load_mjcf_root(root, str(path), path.resolve().parent)
    elif tag == "robot":
        from rigidsim.loaders.urdf_compile import load_urdf

        model = load_urdf(path)
    else:
        raise InputError(f"the root element is <{tag}>, expected <mujoco> (MJCF) or <robot> (URDF)",
                         where=f"{path}:{root.sourceline}")
    model.source = str(scene)
    return model
