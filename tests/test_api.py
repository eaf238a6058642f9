"""The Python API (rigidsim.Batch) used the way a notebook would: the README's example runs, and a batch
driven from Python gives the command line's numbers to the bit (same kernels, same arithmetic)."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest

import rigidsim
from rigidsim.errors import InputError
from tests.cli_util import ROOT, rigidsim as cli

CARTPOLE = ROOT / "scenes" / "cartpole.xml"


def test_readme_example_runs(tmp_path, monkeypatch):
    """The README's Python API section, as written, in a fresh namespace."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "the README's Python API section has no python block"
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "rollout.h5").exists()


def test_a_batch_writes_the_file_the_command_line_writes(tmp_path):
    """Batch(...).run(N, out) from its initial state == `rigidsim run` with the same options and seed, dataset
    by dataset (the reset noise included)."""
    sets = ["init_qpos_noise=0.2", "init_qvel_noise=0.3", "dt=0.005"]
    b = rigidsim.Batch(CARTPOLE, envs=3, sets=sets, seed=5)
    b.run(40, out=tmp_path / "api.h5", record="qpos,qvel,xpos,xquat,qacc")
    p = cli("run", CARTPOLE, "--envs", 3, "--steps", 40, "--seed", 5, "--out", tmp_path / "cli.h5", "--quiet",
            "--record", "qpos,qvel,xpos,xquat,qacc", *[x for s in sets for x in ("--set", s)])
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "api.h5", "r") as fa, h5py.File(tmp_path / "cli.h5", "r") as fc:
        for k in ("time", "qpos", "qvel", "xpos", "xquat", "qacc", "init/qpos", "init/qvel"):
            np.testing.assert_array_equal(fa[k][:], fc[k][:], err_msg=k)
        assert fa.attrs["options_yaml"] == fc.attrs["options_yaml"] and bool(fa.attrs["complete"])


def test_stepping_with_per_env_controls_matches_the_command_line(tmp_path):
    """step(ctrl [B, nu]) once per step == --ctrl [N, B, nu]; the state reads are [B, ...] numpy arrays."""
    B, N = 4, 25
    ctrl = np.random.default_rng(0).uniform(-1, 1, (N, B, 1))
    b = rigidsim.Batch(CARTPOLE, envs=B, keyframe="tilted")
    for t in range(N):
        b.step(ctrl=ctrl[t])
    np.save(tmp_path / "c.npy", ctrl)
    p = cli("run", CARTPOLE, "--envs", B, "--steps", N, "--keyframe", "tilted", "--ctrl", tmp_path / "c.npy",
            "--out", tmp_path / "c.h5", "--quiet")
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert b.qpos.shape == (B, 2) and b.qvel.shape == (B, 2)
        np.testing.assert_array_equal(b.qpos, f["qpos"][N])
        np.testing.assert_array_equal(b.qvel, f["qvel"][N])
        np.testing.assert_array_equal(b.time, np.full(B, f["time"][N]))
        # frame(): the positions of the current state, as the file's frame N has them
        fr = b.frame()
        np.testing.assert_array_equal(fr["xpos"], f["xpos"][N])
        np.testing.assert_array_equal(fr["xquat"], f["xquat"][N])
    # n steps at once with one control row per step: the same as one call per step
    b2 = rigidsim.Batch(CARTPOLE, envs=B, keyframe="tilted")
    b2.step(ctrl=ctrl, n=N)
    np.testing.assert_array_equal(b2.qpos, b.qpos)


def test_reset_some_envs_leaves_the_others(tmp_path):
    b = rigidsim.Batch(CARTPOLE, envs=3, keyframe="tilted")
    b.step(n=10)
    before_q, before_t = b.qpos, b.time
    b.reset(qpos=np.array([[0.0, 0.0], [0.5, 0.1], [0.0, 0.0]]), qvel=np.zeros(2), envs=[1])
    q, t = b.qpos, b.time
    np.testing.assert_array_equal(q[[0, 2]], before_q[[0, 2]])
    np.testing.assert_array_equal(t[[0, 2]], before_t[[0, 2]])
    np.testing.assert_array_equal(q[1], [0.5, 0.1])
    np.testing.assert_array_equal(b.qvel[1], [0.0, 0.0])
    assert t[1] == 0.0 and before_t[1] > 0
    b.reset()  # every env back to the keyframe
    m = b.model
    k = m.names["key"].index("tilted")
    np.testing.assert_array_equal(b.qpos, np.broadcast_to(m.key_qpos[k], (3, m.nq)))
    np.testing.assert_array_equal(b.time, 0.0)


def test_each_reset_draws_new_noise_and_a_seed_repeats_it():
    b = rigidsim.Batch(CARTPOLE, envs=2, options={"init_qpos_noise": 0.1}, seed=1)
    first = b.qpos
    b.reset()
    second = b.qpos
    assert not np.array_equal(first, second)
    b.reset(seed=1)
    np.testing.assert_array_equal(b.qpos, first)


def test_contacts_of_the_current_state_match_the_file(tmp_path):
    """frame()['contacts'] after N steps == the file's contacts of frame N (same pairs, points, forces)."""
    N = 120
    b = rigidsim.Batch("boxes27", envs=2)
    b.step(n=N)
    fr = b.frame()
    p = cli("run", "boxes27", "--envs", 2, "--steps", N, "--every", N, "--out", tmp_path / "x.h5", "--quiet")
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "x.h5", "r") as f:
        off = f["contacts/offsets"][:]
        for e in range(2):
            lo, hi = off[1 * 2 + e], off[1 * 2 + e + 1]  # frame 1 of the file is step N
            c = fr["contacts"][e]
            assert hi - lo == len(c["geom"]) == fr["ncon"][e] > 0
            for k in ("geom", "body", "position", "normal", "penetration", "force"):
                np.testing.assert_array_equal(c[k], f[f"contacts/{k}"][lo:hi], err_msg=k)
        np.testing.assert_array_equal(fr["qpos"], f["qpos"][1])


@pytest.mark.parametrize("kwargs,what", [
    (dict(options={"dtt": 0.1}), "Did you mean 'dt'"),
    (dict(options={"dt": -1.0}), "option 'dt'"),
    (dict(envs=0), "envs must be at least 1"),
])
def test_bad_arguments_raise_input_errors(kwargs, what):
    with pytest.raises(InputError, match=re.escape(what)):
        rigidsim.Batch(CARTPOLE, **kwargs)


def test_another_precision_in_the_same_process_is_refused():
    rigidsim.Batch(CARTPOLE)  # the suite's engine runs in float64
    with pytest.raises(InputError, match="needs a new Python process"):
        rigidsim.Batch(CARTPOLE, precision=32)


def test_bad_states_and_controls_raise_input_errors():
    b = rigidsim.Batch(CARTPOLE, envs=2)
    with pytest.raises(InputError, match="non-finite qpos"):
        b.reset(qpos=np.array([np.nan, 0.0]))
    with pytest.raises(InputError, match=re.escape("qpos has shape [3], expected [2] or [2, 2]")):
        b.reset(qpos=np.zeros(3))
    with pytest.raises(InputError, match=re.escape("qvel has shape [3, 2]")):
        b.reset(qvel=np.zeros((3, 2)))
    with pytest.raises(InputError, match="ctrl"):
        b.step(ctrl=np.zeros((3, 1)))  # 3 rows for 2 envs
    with pytest.raises(InputError, match="NaN"):
        b.step(ctrl=np.array([np.nan]))
