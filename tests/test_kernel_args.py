"""The kernels' array arguments come from one table (engine/layout.py): kernels.py's generated argument
lists are up to date, and put_model / make_data / the per-env strides in opt_i agree with the table."""

import numpy as np

from rigidsim.engine import data as D
from rigidsim.engine import kernel_args
from rigidsim.engine import layout as L
from rigidsim.loaders import load_scene


def test_generated_argument_lists_are_up_to_date():
    for path in kernel_args.FILES:
        text = path.read_text()
        assert "# >>> generated: signature" in text and "# >>> generated: groups" in text, path
        assert kernel_args.render(text) == text, f"{path}: run python -m rigidsim.engine.kernel_args"


def test_render_follows_the_table(monkeypatch):
    """A new table line appears in every generated signature and group call."""
    text = kernel_args.KERNELS.read_text()
    last = L.DATA_ARGS[-1]
    monkeypatch.setattr(L, "DATA_ARGS", L.DATA_ARGS + ("future_array",))
    new = kernel_args.render(text)
    n_kernels = text.count("# >>> generated: signature")
    assert new.count("future_array: ND,") == n_kernels
    # the new array closes every _data(...) group, right after the table's last one
    assert new.count(" future_array),") == text.count("# >>> generated: groups")
    assert new.count(f"{last},") == text.count("# >>> generated: groups") + text.count(f"{last},")


def test_arrays_and_strides_follow_the_table():
    model = load_scene("chain")
    mp = D.put_model(model, np.float64)
    assert tuple(mp) == L.MODEL_ARGS
    d = D.make_data(model, 3, np.float64)
    assert tuple(d) == L.DATA_ARGS
    opt_i = mp["opt_i"]
    for name, rows, cols, *_ in L.DATA_ARRAYS:
        a = d[name]
        assert a.shape[0] == 3
        if rows is None:
            assert a.shape == (3,)
        else:
            # the stride a kernel uses to go from env b's rows to env b + 1's is the array's per-env size
            assert opt_i[L.STR[name]] == a[0].size, name
    assert len(set(L.STR.values())) == len(L.STR) and max(L.STR.values()) < L.NOPT_I


def test_put_model_packs_the_collision_pair_table():
    """put_model holds the pair table of engine.collision_pairs for the options it is given."""
    from rigidsim.engine.collision_pairs import PAIR_OPTIONS, collision_pairs

    model = load_scene("falling_objects")
    for extra in ({}, {"enable_self_collision": False}, {"enable_collision": False}):
        r = {**PAIR_OPTIONS, **extra}
        pairs, explicit = collision_pairs(model, r)
        mp = D.put_model(model, np.float64, r)
        n = mp["opt_i"][L.SZ_NPAIR]
        assert n == len(pairs)
        g = mp["pair_i"][:n, L.PAIR_GEOM1:L.PAIR_GEOM2 + 1]
        np.testing.assert_array_equal(np.sort(g, axis=1), pairs)
        # in the collider's order, as MuJoCo orders a pair: geom 1 of the lower type
        assert (model.geom_type[g[:, 0]] <= model.geom_type[g[:, 1]]).all()
        np.testing.assert_array_equal(mp["pair_i"][:n, L.PAIR_EXPLICIT], explicit)
    assert len(collision_pairs(model, PAIR_OPTIONS)[0]) > 0  # the scene does collide
