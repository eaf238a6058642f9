"""The contact pool of a recording rollout (`Simulator.rollout_blocks(..., contacts=True)`): each recorded
frame writes its own contact rows into a pool shared by the launch, and an env that finds no room pauses after
its forward pass and is resumed into a larger pool. Exact properties: a run whose pool starts at 2 rows (so
envs pause and resume many times) records bit for bit what a roomy run records and ends in the same state as
a run that records nothing; the last frame's rows are the engine's own contacts of the final state; a scene
without contacts records none. Against MuJoCo: the final frame's contacts are mj_forward's at that state."""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim import options as opts
from rigidsim.engine import simulator as S
from rigidsim.engine.simulator import Simulator
from rigidsim.loaders import load_scene
from tests.test_engine_helpers import count_launches, force_env_slices

SCENE = """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0.05 0.02 0.6"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="-0.3 0 0.2"><freejoint/><geom type="capsule" size="0.05 0.1" euler="0 90 0"/></body>
  </worldbody>
</mujoco>
"""
B, STEPS = 3, 80


def _load(tmp_path_factory, xml):
    p = tmp_path_factory.mktemp("pool") / "scene.xml"
    p.write_text(xml)
    return load_scene(str(p))


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("pool") / "scene.xml"
    p.write_text(SCENE)
    return p


@pytest.fixture(scope="module")
def path_rk4(tmp_path_factory):
    """RK4 records at its first stage and carries state between stages: a pause must not disturb that."""
    p = tmp_path_factory.mktemp("pool") / "scene_rk4.xml"
    p.write_text(SCENE.replace('timestep="0.005"', 'timestep="0.005" integrator="RK4"'))
    return p


def _sim(path):
    model = load_scene(str(path))
    r = opts.resolve(model, {}, {}, precision=64, backend="cpu")
    model = opts.apply(model, r)
    sim = Simulator(model, B, pair_options=r)
    q = np.tile(model.qpos0, (B, 1))
    q[:, 2] += np.array([0.0, 0.05, 0.1])  # each env falls from its own height
    sim.reset(qpos=q)
    return model, sim


def _record(sim):
    frames, rows = [], []
    for _, block in sim.rollout_blocks(STEPS, contacts=True):
        f = sim.fields(block)
        frames.append(block.copy())
        c = sim.contact_rows(f)
        rows.append({k: np.array(v) for k, v in c.items()})
    return np.concatenate(frames), {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}


@pytest.fixture(scope="module")
def roomy(path):
    model, sim = _sim(path)
    return _record(sim)


@pytest.mark.parametrize("integrator, sliced", [("Euler", False), ("RK4", False), ("Euler", True)],
                         ids=["Euler", "RK4", "Euler, env slices"])
def test_paused_envs_record_what_a_roomy_pool_records(integrator, sliced, path, path_rk4, roomy, monkeypatch):
    """Sliced: each window launched one env at a time (`force_env_slices`), the slices' rows following each
    other in the pool, and a paused env resumed within its own slice."""
    if integrator == "RK4":
        path = path_rk4
        roomy = _record(_sim(path)[1])
    model, sim = _sim(path)
    monkeypatch.setattr(S, "CONTACT_BUDGET_BYTES", 2 * 12 * 8)  # a pool of 2 rows to start with
    launches = force_env_slices(monkeypatch, sim, slices=B) if sliced else count_launches(monkeypatch, sim)
    frames, rows = _record(sim)
    assert sum(r for r, _ in launches) >= 3  # envs did pause and resume
    if sliced:
        assert {e for _, e in launches} == {(0, 1), (1, 2), (2, 3)}
    ref_frames, ref_rows = roomy
    assert rows["count"].sum() > 3 * STEPS  # the envs are in contact most of the run
    for k in ref_rows:
        np.testing.assert_array_equal(rows[k], ref_rows[k], err_msg=k)
    lay = sim._layout
    for k, (o, w, _) in lay.items():
        if k != "crec":  # where rows sit in the pool differs; what they hold does not (above)
            np.testing.assert_array_equal(frames[:, :, o:o + w], ref_frames[:, :, o:o + w], err_msg=k)


def test_recording_changes_no_state_and_last_rows_are_the_engines(path, roomy):
    model, sim = _sim(path)
    sim.step(STEPS)
    frames, rows = roomy
    o, w, _ = S.L.frame_layout(model.nq, model.nv, model.nu, model.na, model.nbody, True, True)[0]["qpos"]
    np.testing.assert_array_equal(frames[-1, :, o:o + w], sim.get("qpos"))
    sim.forward()
    c = sim.contacts()
    n = rows["count"][-1]
    np.testing.assert_array_equal(n, c["count"])
    last = slice(rows["geom"].shape[0] - int(n.sum()), None)
    np.testing.assert_array_equal(rows["geom"][last], c["geom"])
    np.testing.assert_array_equal(rows["pos"][last], c["pos"])
    np.testing.assert_array_equal(rows["normal"][last], c["frame"][:, 0])
    np.testing.assert_array_equal(rows["dist"][last], c["dist"])


def test_final_contacts_match_mujoco(path, roomy):
    mujoco = pytest.importorskip("mujoco")
    model, sim = _sim(path)
    frames, rows = roomy
    lay = sim._layout if sim._layout.get("crec") else S.L.frame_layout(
        model.nq, model.nv, model.nu, model.na, model.nbody, True, True)[0]
    m = mujoco.MjModel.from_xml_string(SCENE)
    d = mujoco.MjData(m)
    first = rows["geom"].shape[0] - int(rows["count"][-1].sum())
    for e in range(B):
        d.qpos[:] = frames[-1, e, lay["qpos"][0]:lay["qpos"][0] + model.nq]
        d.qvel[:] = frames[-1, e, lay["qvel"][0]:lay["qvel"][0] + model.nv]
        mujoco.mj_forward(m, d)
        n = int(rows["count"][-1, e])
        assert n == d.ncon and n > 0
        mine = sorted(range(first, first + n), key=lambda k: (tuple(rows["geom"][k]), tuple(rows["pos"][k])))
        theirs = sorted(range(n), key=lambda i: (tuple(d.contact[i].geom), tuple(d.contact[i].pos)))
        for k, i in zip(mine, theirs):
            assert tuple(rows["geom"][k]) == tuple(d.contact[i].geom)
            np.testing.assert_allclose(rows["pos"][k], d.contact[i].pos, rtol=0, atol=1e-9)
            np.testing.assert_allclose(rows["normal"][k], d.contact[i].frame[:3], rtol=0, atol=1e-9)
            np.testing.assert_allclose(rows["dist"][k], d.contact[i].dist, rtol=0, atol=1e-9)
        first += n


def test_a_scene_without_contacts_records_none(tmp_path_factory):
    model = _load(tmp_path_factory, SCENE.replace('<geom name="floor" type="plane" size="5 5 .1"/>', "")
                             .replace('pos="0.05 0.02 0.6"', 'pos="3 0 0.6"').replace('pos="-0.3 0 0.2"', 'pos="-3 0 0.2"'))
    r = opts.resolve(model, {}, {}, precision=64, backend="cpu")
    sim = Simulator(opts.apply(model, r), 2, pair_options=r)
    total = 0
    for _, block in sim.rollout_blocks(10, contacts=True):
        c = sim.contact_rows(sim.fields(block))
        total += int(c["count"].sum()) + c["geom"].shape[0]
    assert total == 0


def test_reset_in_place_and_prepared_arrays_change_nothing(path, roomy, monkeypatch):
    """A small batch is reset in place (its arrays, and so the launches' cached argument contexts, kept) and
    `prepare` with the rollout's arguments launches with the arrays the rollout then passes: the rollout after
    either records bit for bit what the first rollout of a new Simulator records."""
    model, sim = _sim(path)
    d0 = {k: v for k, v in sim._d.items()}
    q0 = sim.get("qpos")
    ref_frames, ref_rows = roomy
    for _ in range(2):  # the second time after a rollout has left its scratch in every array
        sim.reset(qpos=q0)
        assert all(sim._d[k] is d0[k] for k in d0)
        sim.prepare(STEPS, 1, None, True)
        frames, rows = _record(sim)
        for k in ref_rows:
            np.testing.assert_array_equal(rows[k], ref_rows[k], err_msg=k)
        crec = sim._layout["crec"][0]
        np.testing.assert_array_equal(frames[:, :, :crec], ref_frames[:, :, :crec])
    monkeypatch.setattr(S, "RESET_IN_PLACE_BYTES", 0)  # a large batch: new arrays
    sim.reset(qpos=q0)
    assert sim._d["qpos"] is not d0["qpos"]
    frames, rows = _record(sim)
    np.testing.assert_array_equal(rows["force"], ref_rows["force"])
