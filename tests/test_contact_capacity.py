"""max_contacts null (the default): the contact capacity starts small (`simulator.CONTACTS_START`, at least two
per geom) and grows when an env finds more contacts than it holds: the env pauses, the buffers sized by the
capacity are made anew, and the step is done again. Exact properties: a run that grows records bit for bit
what a run with the full capacity (every candidate pair's most) records, through the rollout, `step` and
`collide`; the capacity ends between the start and the full one; an explicit max_contacts still stops the
run when exceeded (tests/test_cli_contacts.py)."""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim import options as opts
from rigidsim.engine import simulator as S
from rigidsim.engine.simulator import Simulator
from rigidsim.loaders import load_scene
from tests.test_engine_helpers import force_env_slices

BOXES = "\n".join(
    f'<body pos="{0.5 * (i % 3)} {0.5 * (i // 3)} {0.12 + 0.05 * i}"><freejoint/>'
    f'<geom type="box" size="0.1 0.1 0.1"/></body>' for i in range(6))
SCENE = f"""
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    {BOXES}
  </worldbody>
</mujoco>
"""
B, STEPS = 2, 60


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("capacity") / "boxes.xml"
    p.write_text(SCENE)
    return p


def _sim(path, max_contacts=None):
    model = load_scene(str(path))
    r = opts.resolve(model, {} if max_contacts is None else {"max_contacts": max_contacts}, {}, precision=64,
                     backend="cpu")
    sim = Simulator(opts.apply(model, r), B, pair_options=r)
    q = np.tile(sim.model.qpos0, (B, 1))
    q[1, 2::7] += 0.05  # env 1 lands later
    sim.reset(qpos=q)
    return sim


def _record(sim):
    frames, rows = [], []
    for _, block in sim.rollout_blocks(STEPS, contacts=True):
        frames.append(block.copy())
        rows.append({k: np.array(v) for k, v in sim.contact_rows(sim.fields(block)).items()})
    return np.concatenate(frames), {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}


@pytest.fixture(scope="module")
def full(path):
    probe = _sim(path)
    n = probe._sizes["nconall"]
    return n, _sim(path, n)


def test_growing_capacity_records_what_the_full_one_does(path, full, monkeypatch):
    monkeypatch.setattr(S, "CONTACTS_START", 1)  # two per geom: 14 contacts, where the boxes land on 24
    n, ref = full
    sim = _sim(path)
    start = sim.nconmax
    assert sim._grow and start == 14 and ref.nconmax == n > start
    frames, rows = _record(sim)
    ref_frames, ref_rows = _record(ref)
    assert start < sim.nconmax < n and rows["count"].max() > start
    for k in ref_rows:
        np.testing.assert_array_equal(rows[k], ref_rows[k], err_msg=k)
    crec = sim._layout["crec"][0]
    np.testing.assert_array_equal(frames[:, :, :crec], ref_frames[:, :, :crec])


def test_growing_capacity_in_step_and_collide(path, full, monkeypatch):
    monkeypatch.setattr(S, "CONTACTS_START", 1)
    n, ref = full
    sim = _sim(path)
    ref.reset(qpos=sim.get("qpos"))
    sim.step(STEPS)
    ref.step(STEPS)
    np.testing.assert_array_equal(sim.get("qpos"), ref.get("qpos"))
    assert sim.nconmax > 14
    fresh = _sim(path)
    fresh.reset(qpos=sim.get("qpos"))
    fresh.collide()
    ref.collide()
    a, b = fresh.contacts(), ref.contacts()
    assert a["count"].max() > 14
    for k in b:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_rk4_takes_the_full_capacity(tmp_path):
    p = tmp_path / "rk4.xml"
    p.write_text(SCENE.replace('timestep="0.005"', 'timestep="0.005" integrator="RK4"'))
    sim = _sim(p)
    assert not sim._grow and sim.nconmax == sim._sizes["nconall"]


@pytest.mark.parametrize("sliced", [False, True], ids=["whole batch", "env slices"])
def test_capacity_and_pool_growing_in_one_launch(path, full, monkeypatch, sliced):
    """Envs paused for room in the contact pool while others pause for contact capacity: the capacity's new
    buffers drop the former's forward pass, so they do it again (they recorded zero rows before the fix).
    Sliced: two slices of the env loop, the capacity growing in one while the other's envs wait."""
    monkeypatch.setattr(S, "CONTACTS_START", 1)
    monkeypatch.setattr(S, "CONTACT_BUDGET_BYTES", 2 * 12 * 8)  # a pool of 2 rows to start with
    n, ref = full
    sim = _sim(path)
    if sliced:
        force_env_slices(monkeypatch, sim, slices=2)
    frames, rows = _record(sim)
    ref.reset(qpos=_sim(path).get("qpos"))  # the initial state (`full` is shared with the other tests)
    ref_frames, ref_rows = _record(ref)
    assert sim.nconmax > 14
    for k in ref_rows:
        np.testing.assert_array_equal(rows[k], ref_rows[k], err_msg=k)
