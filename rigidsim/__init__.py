"""rigidsim: a batched rigid-body simulator with MuJoCo's physics, in Taichi."""

__version__ = "0.1.0"
