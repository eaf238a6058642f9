"""The argument groups every kernel hands to its ti.funcs: the packed model and data arrays under their names
(`_model`, `_data`), each indexed as the N-D array it is (`_Flat`). Built while a kernel or a compiled
function (`functions.compiled`) is being compiled, from its array arguments."""

from rigidsim.engine.lang import impl, ti

from rigidsim.engine import layout as L

ND = ti.types.ndarray()


class _Group:
    """Names for a group of kernel arguments, built at compile time and passed to ti.funcs."""

    def __init__(self, **arrays):
        self.__dict__.update(arrays)


class _Flat:
    """A packed array that the kernel takes flattened to 1-D, indexed as the N-D array it is.

    ``a[b, i, c]`` is ``flat[b * strides[0] + i * strides[1] + c]``; each stride is a Python int (a layout
    constant) or an in-kernel variable computed once per env. Taichi reloads an N-D ndarray's shape from the
    argument buffer at every access after any store (LLVM cannot prove the two do not alias), and multiplies
    it out; a flat index is plain register arithmetic.
    """

    def __init__(self, arr, *strides):
        self.arr = arr
        self.strides = strides

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        flat = idx[-1]
        for k, s in zip(idx[:-1], self.strides):
            flat = k * s + flat
        return impl.subscript(None, self.arr, flat)


def _model(*arrays):
    """The model group (called while compiling, inside the env loop): the arrays of `layout.MODEL_ARRAYS` in
    its order, each indexed with its columns as the row stride."""
    g = {}
    for (name, rows, cols, _), arr in zip(L.MODEL_ARRAYS, arrays):
        g[name] = arr if rows is None else _Flat(arr, cols)
    return _Group(**g)


def _data(opt_i, *arrays):
    """The data group (called while compiling, inside the env loop): the arrays of `layout.DATA_ARRAYS` in
    its order. Each array's per-env stride is read from opt_i where it is used: an opaque load keeps LLVM's
    loop-strength reduction and register allocation, most of the cost of loading a cached kernel, far
    cheaper than strides held in registers across the whole step, at no measurable run-time cost."""
    def st(k):
        return impl.subscript(None, opt_i, k)

    g = {}
    for (name, rows, cols, *_), arr in zip(L.DATA_ARRAYS, arrays):
        if rows is None:
            g[name] = arr
        elif cols == 1:
            g[name] = _Flat(arr, st(L.STR[name]))
        else:
            g[name] = _Flat(arr, st(L.STR[name]), st(L.SZ_OF[cols]) if isinstance(cols, str) else cols)
    return _Group(**g)
