"""Mesh and height-field assets (placeholder while the mesh compiler lands)."""

from rigidsim.errors import InputError
from rigidsim.loaders.mjcf_defaults import where


def compile_mesh(rec, scene, compiler):
    raise InputError("meshes are not supported yet", where=where(rec.el, scene.filename))


def compile_hfield(rec, scene, compiler):
    raise InputError("height fields are not supported yet", where=where(rec.el, scene.filename))
