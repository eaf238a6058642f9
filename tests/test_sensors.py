"""sensordata against MuJoCo (issue 32).

At states of MuJoCo runs (`mj_forward`'s sensordata at each), every sensor of tests/scenes/every_sensor.xml (every
type the engine computes, on each object type it accepts) and of the shared dm_control models must give MuJoCo's
values: to 1e-9 for the position and velocity stages, 1e-6 (scaled: |a - b| / max(1, |b|)) for the acceleration
stage. A free run records sensordata in every frame, and it follows MuJoCo's over 100 steps to 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigidsim import options as opts
from rigidsim.compare.stages import set_states
from rigidsim.engine import sensor as S
from rigidsim.engine.simulator import Simulator
from rigidsim.errors import InputError
from rigidsim.loaders import load_scene
from tests.cli_util import MODELS, ROOT
from tests.sweep_slice import selection

mujoco = pytest.importorskip("mujoco")

SCENE = ROOT / "tests" / "scenes" / "every_sensor.xml"
HISTORY = ROOT / "tests" / "scenes" / "sensor_history.xml"
TOL = {1: 1e-9, 2: 1e-9, 3: 1e-6}  # by mjtStage: position, velocity, acceleration
ZERO_BY_DESIGN = {"touch_top", "inside_ell", "inside_capsule"}  # a zone its contacts' force rays never meet; objects
# outside the sites they are tested against
# the shared models with sensors (the quadruped: 20 rangefinders over a height field)
SHARED = ("dm_control/hopper.xml", "dm_control/cheetah.xml", "dm_control/walker.xml", "dm_control/humanoid.xml",
          "dm_control/finger.xml", "dm_control/fish.xml", "dm_control/swimmer.xml", "dm_control/manipulator.xml",
          "dm_control/stacker.xml", "dm_control/humanoid_CMU.xml", "dm_control/dog.xml", "dm_control/quadruped.xml")


def _compat(path):
    """The scene as MuJoCo runs it: our Model under enable_mujoco_compatibility, and the resolved options."""
    m0 = load_scene(str(path))
    r = opts.resolve(m0, {}, {"enable_mujoco_compatibility": True})
    return opts.apply(m0, r), r


def _mujoco_states(mjm, nstep: int, stride: int, key=None, seed: int = 0):
    """Every stride-th state of a MuJoCo run with random controls, and mj_forward's sensordata at each."""
    d = mujoco.MjData(mjm)
    if key is not None:
        mujoco.mj_resetDataKeyframe(mjm, d, key)
    rng = np.random.default_rng(seed)
    states, ref = [], []
    for t in range(nstep):
        if mjm.nu:
            lo, hi = mjm.actuator_ctrlrange.T
            d.ctrl[:] = np.where(mjm.actuator_ctrllimited, lo + (hi - lo) * rng.random(mjm.nu), rng.normal(size=mjm.nu))
        mujoco.mj_forward(mjm, d)
        if t % stride == 0:
            states.append({"qpos": d.qpos.copy(), "qvel": d.qvel.copy(), "act": d.act.copy(), "ctrl": d.ctrl.copy(),
                           "mocap_pos": d.mocap_pos.copy(), "mocap_quat": d.mocap_quat.copy(),
                           "eq_active": d.eq_active.copy(), "qacc_warmstart": d.qacc_warmstart.copy(),
                           "time": float(d.time), "history": d.history.copy()})
            ref.append(d.sensordata.copy())
        mujoco.mj_step(mjm, d)
    return states, np.array(ref)


def _ours(model, r, states):
    sim = Simulator(model, len(states), pair_options=r)
    set_states(sim, states)
    sim.forward()
    return sim.sensordata()


def _check(model, got, ref):
    """Per sensor: its largest scaled error over the states must be within its stage's tolerance."""
    bad = []
    for i in range(model.nsensor):
        a, n = int(model.sensor_adr[i]), int(model.sensor_dim[i])
        err = np.abs(got[:, a:a + n] - ref[:, a:a + n]).max() / max(1.0, float(np.abs(ref[:, a:a + n]).max()))
        tol = TOL[int(model.sensor_needstage[i])]
        if not err <= tol:
            bad.append(f"{model.names['sensor'][i]} (type {int(model.sensor_type[i])}): {err:.3g} > {tol:g}")
    assert not bad, "; ".join(bad)


@pytest.fixture(scope="module", params=[pytest.param(x, id=tid) for x, tid in selection(
    "sensor_cones", ("pyramidal", "elliptic"), (), 1)])
def every_sensor(request, tmp_path_factory):
    """(model, ours, MuJoCo's) at 40 states: 20 from the keyframe (the box sliding), 20 from qpos0, with the
    scene's friction cone `param` (one cone per commit, both under RIGIDSIM_SWEEP=1: each compiles a kernel)."""
    path = tmp_path_factory.mktemp("sens") / "every_sensor.xml"
    path.write_text(SCENE.read_text().replace('cone="pyramidal"', f'cone="{request.param}"'))
    model, r = _compat(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    s1, r1 = _mujoco_states(mjm, 200, 10, key=0)
    s2, r2 = _mujoco_states(mjm, 400, 20, seed=1)
    states = s1 + s2
    return model, _ours(model, r, states), np.concatenate([r1, r2])


def test_the_scene_has_every_computed_type():
    model = load_scene(str(SCENE))
    assert set(int(t) for t in model.sensor_type) == set(S.GROUP_OF)


def test_every_sensor_equals_mujoco(every_sensor):
    model, got, ref = every_sensor
    _check(model, got, ref)


def test_the_states_exercise_every_sensor(every_sensor):
    """The comparison is not of zeros: every sensor but the one designed to miss reads something in some state,
    and the limit sensors read 0 in others (their limit inactive)."""
    model, _, ref = every_sensor
    names = model.names["sensor"]
    for i in range(model.nsensor):
        a, n = int(model.sensor_adr[i]), int(model.sensor_dim[i])
        v = np.abs(ref[:, a:a + n]).max(axis=1)
        if names[i] in ZERO_BY_DESIGN:
            assert v.max() == 0.0, names[i]
        else:
            assert v.max() > 0.0, names[i]
        if "limit" in names[i] or names[i].startswith("touch_b"):
            assert v.min() == 0.0, names[i]


def test_cutoff_clips(every_sensor):
    """force_arm (cutoff 5), touch_cyl (3) and rf_diag (0.7) reach their cutoffs in MuJoCo's run, and equal them;
    rf_up (0.5) never hits: its -1 is clipped to -0.5, as MuJoCo clips a real value on both sides."""
    model, got, ref = every_sensor
    for name, cut in (("force_arm", 5.0), ("touch_cyl", 3.0), ("rf_diag", 0.7), ("rf_up", 0.5)):
        i = model.names["sensor"].index(name)
        a, n = int(model.sensor_adr[i]), int(model.sensor_dim[i])
        assert np.abs(ref[:, a:a + n]).max() == cut
        assert np.abs(got[:, a:a + n]).max() == cut
    i = model.names["sensor"].index("rf_up")
    assert (got[:, model.sensor_adr[i]] == -0.5).all() and (ref[:, model.sensor_adr[i]] == -0.5).all()


@pytest.mark.parametrize("rel", [pytest.param(x, id=tid) for x, tid in selection(
    "sensor_models", SHARED, ("dm_control/hopper.xml",), 1)])
def test_shared_model_sensors_equal_mujoco(rel):
    path = MODELS / rel
    if not path.exists():
        pytest.skip(f"{path} not found (../shared is not here)")
    model, r = _compat(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    states, ref = _mujoco_states(mjm, 60, 6, key=0 if mjm.nkey else None)
    _check(model, _ours(model, r, states), ref)


def test_free_run_follows_mujoco():
    """A rollout's recorded sensordata (the hopper from qpos0, a fixed control sequence) follows MuJoCo's
    mj_step run frame by frame over 100 steps to 1e-6."""
    path = MODELS / "dm_control" / "hopper.xml"
    if not path.exists():
        pytest.skip(f"{path} not found (../shared is not here)")
    model, r = _compat(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mjm)
    ctrl = np.random.default_rng(3).uniform(-1, 1, (100, 1, mjm.nu))
    ref = []
    for t in range(101):
        if t < 100:
            d.ctrl[:] = ctrl[t, 0]
        mujoco.mj_forward(mjm, d)
        ref.append(d.sensordata.copy())
        mujoco.mj_step(mjm, d)
    sim = Simulator(model, 1, pair_options=r)
    got = [f["sensordata"][0] for f in sim.rollout(100, ctrl=ctrl, sensors=True)]
    ref = np.array(ref)
    err = np.abs(np.array(got) - ref).max(axis=0) / np.maximum(1.0, np.abs(ref).max(axis=0))
    assert err.max() <= 1e-6, (model.names["sensor"][int(np.searchsorted(model.sensor_adr, err.argmax(), "right")) - 1],
                               err.max())


MESH_RF = ('<mujoco><asset><mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset><worldbody>'
           '<geom type="mesh" mesh="m" pos="2 0 0"/><body><freejoint/><geom size=".1"/><site name="s"/></body>'
           '</worldbody><sensor><rangefinder name="rf" site="s"/><clock/></sensor></mujoco>')


def test_a_sensor_not_computed_is_named(tmp_path):
    """Rays are not cast against meshes yet: a rangefinder in a scene with a mesh a ray sees is not computed.
    Nor the distance of a plane and a mesh."""
    p = tmp_path / "rf.xml"
    p.write_text(MESH_RF)
    sim = Simulator(load_scene(str(p)), 1)
    with pytest.raises(ValueError, match="sensors not computed yet: rf"):
        sim.sensordata()
    p.write_text('<mujoco><asset><mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset><worldbody>'
                 '<geom name="a" type="plane" size="1 1 1"/><body pos="1 0 0"><freejoint/>'
                 '<geom name="b" type="mesh" mesh="m"/><site name="s"/></body></worldbody><sensor>'
                 '<distance name="plane_mesh" geom1="a" geom2="b" cutoff="2"/><distance name="ok" geom1="b" '
                 'geom2="b" cutoff="1"/></sensor></mujoco>')
    with pytest.raises(InputError, match="must differ"):
        load_scene(str(p))
    p.write_text(p.read_text().replace(' geom1="b" geom2="b"', ' body1="world" geom2="b"'))
    model = load_scene(str(p))
    assert S.not_computed(model) == [0, 1]
    assert "a plane and a mesh" in S.why_not_computed(model, S.not_computed(model))


# ----------------------------------------------------------------------------- the file, the API and the tools
NO_SENSORS = '<mujoco><worldbody><body><freejoint/><geom size=".1"/></body></worldbody></mujoco>'


@pytest.fixture(scope="module")
def sensor_batch():
    import rigidsim

    return rigidsim.Batch(SCENE, envs=2, keyframe="sliding", options={"enable_mujoco_compatibility": True})


@pytest.fixture(scope="module")
def sensor_file(sensor_batch, tmp_path_factory):
    """`Batch.run` (`rigidsim run`'s writer and default record) of the every-sensor scene from its keyframe: (path,
    MuJoCo's sensordata at frames 0 to 10 of the same run (controls zero)). The command line's default record
    is run by tests/test_readme.py (the humanoid, read back with read_sensor)."""
    out = tmp_path_factory.mktemp("sensfile") / "s.h5"
    sensor_batch.reset()
    sensor_batch.run(10, out)
    sensor_batch.reset()
    mjm = mujoco.MjModel.from_xml_path(str(SCENE))
    d = mujoco.MjData(mjm)
    mujoco.mj_resetDataKeyframe(mjm, d, 0)
    ref = []
    for t in range(11):
        mujoco.mj_forward(mjm, d)
        ref.append(d.sensordata.copy())
        mujoco.mj_step(mjm, d)
    return out, np.array(ref)


def test_run_records_sensordata_by_default(sensor_file):
    import h5py

    out, ref = sensor_file
    with h5py.File(out) as f:
        sd = f["sensordata"][()]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["model/sensor_names"][()]]
    assert sd.shape == (11, 2, ref.shape[1])
    err = np.abs(sd - ref[:, None]).max(axis=(0, 1)) / np.maximum(1.0, np.abs(ref).max(axis=0))
    assert err.max() <= 1e-6, names[int(np.searchsorted(load_scene(str(SCENE)).sensor_adr, err.argmax(), "right")) - 1]


def test_read_sensor_and_batch_sensor_by_name(sensor_file, sensor_batch):
    import h5py

    import rigidsim

    out, ref = sensor_file
    model = load_scene(str(SCENE))
    i = model.names["sensor"].index("framequat_ref")
    a = int(model.sensor_adr[i])
    v = rigidsim.read_sensor(out, "framequat_ref")
    assert v.shape == (11, 2, 4)
    np.testing.assert_allclose(v[:, 0], ref[:, a:a + 4], rtol=0, atol=1e-9)
    b = sensor_batch
    np.testing.assert_allclose(b.sensor("framequat_ref"), ref[[0, 0], a:a + 4], rtol=0, atol=1e-9)
    with h5py.File(out) as f:
        whole = f["sensordata"][()]
    np.testing.assert_array_equal(b.sensor("framequat_ref", whole), v)  # slicing a file's rows by name
    assert b.sensordata.shape == (2, model.nsensordata)
    with pytest.raises(rigidsim.InputError, match="Did you mean 'framequat_ref'"):
        b.sensor("framequat_rf")
    with pytest.raises(rigidsim.InputError, match="no sensor named 'nope'"):
        rigidsim.read_sensor(out, "nope")


def test_record_refusals_and_notes(tmp_path):
    from rigidsim import runner
    from rigidsim.errors import InputError
    from tests.cli_util import assert_clean_error, rigidsim

    none = tmp_path / "none.xml"
    none.write_text(NO_SENSORS)
    text = assert_clean_error(rigidsim("run", none, "--steps", "1", "--out", tmp_path / "a.h5", "--record",
                                       "qpos,sensordata"), 2)
    assert "declares no <sensor>" in text and not (tmp_path / "a.h5").exists()
    rf = tmp_path / "rf.xml"
    rf.write_text(MESH_RF)
    model = load_scene(str(rf))
    with pytest.raises(InputError) as e:
        runner.with_sensors(("qpos", "sensordata"), False, model, lambda _: None)
    assert "does not compute rangefinders in a scene with mesh geoms (rays" in e.value.message
    assert "yet: rf." in e.value.message and "--record qpos" in e.value.message
    notes = []
    assert runner.with_sensors(runner.DEFAULT_RECORD, True, model, notes.append) == runner.DEFAULT_RECORD
    assert len(notes) == 1 and notes[0].startswith("sensordata not recorded")
    assert runner.with_sensors(runner.DEFAULT_RECORD, True, load_scene(str(SCENE)), notes.append)[-1] == "sensordata"


def test_diff_and_plot_see_sensors(sensor_file, tmp_path):
    import shutil

    import h5py

    from tests.cli_util import rigidsim

    out, _ = sensor_file
    other = tmp_path / "other.h5"
    shutil.copy(out, other)
    model = load_scene(str(SCENE))
    a = int(model.sensor_adr[model.names["sensor"].index("gyro")])
    with h5py.File(other, "r+") as f:
        f["sensordata"][5, 1, a] += 1e-3
    p = rigidsim("diff", out, other)
    assert p.returncode == 1 and "sensordata" in p.stdout, p.stdout + p.stderr
    pytest.importorskip("matplotlib")
    from rigidsim import plot as P

    with h5py.File(out) as f:
        fig = P.build_figure(f, fields=["qpos", "gyro", "touch_bottom"])
    assert [ax.get_label() for ax in fig.axes] == ["qpos", "gyro", "touch_bottom"]


def test_compare_has_sensor_stages():
    """`rigidsim compare`'s stages 7 and 8, on the hopper (whose kernels the tests above compiled)."""
    from rigidsim.compare.stages import CompareArgs, compare

    path = MODELS / "dm_control" / "hopper.xml"
    if not path.exists():
        pytest.skip(f"{path} not found (../shared is not here)")
    res = compare(CompareArgs(scene=str(path), steps=20))
    names = {s.number: s for s in res.stages}
    assert names[7].name.startswith("sensors") and names[8].name.startswith("sensors")
    assert all(s.ok for s in res.stages), [(s.name, s.error, s.detail) for s in res.stages if not s.ok]


# ----------------------------------------------------------------------------- history (MuJoCo 4.0)


def test_history_buffers_start_as_mujocos():
    """The buffers' initial times (a timestep or a period apart, phases rounded up to the timestep grid), cursors
    and last compute times equal MuJoCo's mj_resetData's, exactly (the same arithmetic)."""
    from rigidsim.engine.data import history_init

    model = load_scene(str(HISTORY))
    mjm = mujoco.MjModel.from_xml_path(str(HISTORY))
    assert model.nhistory == mjm.nhistory > 0
    assert np.array_equal(history_init(model), mujoco.MjData(mjm).history)


@pytest.mark.parametrize("integrator", [pytest.param(x, id=tid) for x, tid in selection(
    "history_integrators", ("Euler", "RK4"), (), 1)])
def test_history_sensors_follow_mujoco(integrator, tmp_path):
    """A free run of 150 steps with random controls: every history sensor's sensordata follows MuJoCo's mj_step,
    the buffers advancing through the first 50 steps that record no sensordata too (RK4 under RIGIDSIM_SWEEP=1
    or every other commit: a kernel of its own)."""
    path = tmp_path / "history.xml"
    path.write_text(HISTORY.read_text().replace('<option timestep="0.002"/>',
                                                f'<option timestep="0.002" integrator="{integrator}"/>'))
    model, r = _compat(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mjm)
    n, first = 150, 50
    ctrl = np.random.default_rng(0).normal(size=(n, 1, 1))
    ref = []
    for t in range(n):
        d.ctrl[:] = ctrl[t, 0]
        mujoco.mj_step(mjm, d)  # its sensordata: at the state before the step, as our frame t
        ref.append(d.sensordata.copy())
    ref = np.array(ref)[first:]
    sim = Simulator(model, 1, pair_options=r)
    list(sim.rollout(first, ctrl=ctrl[:first]))
    got = np.array([f["sensordata"][0] for f in sim.rollout(n - first, ctrl=ctrl[first:], sensors=True)])[:-1]
    _check(model, got, ref)
    # the delayed values are not the current ones: the buffers are read
    now, zoh = (int(model.sensor_adr[model.names["sensor"].index(k)]) for k in ("now", "zoh"))
    assert np.abs(ref[:, zoh] - ref[:, now]).max() > 1e-3


def test_history_at_mujoco_states():
    """At MuJoCo's states with its buffers (`set_states`, as rigidsim compare sets them) sensordata equals
    mj_forward's: delayed and held values read from the same buffers."""
    model, r = _compat(HISTORY)
    mjm = mujoco.MjModel.from_xml_path(str(HISTORY))
    states, ref = _mujoco_states(mjm, 120, 7, seed=2)
    _check(model, _ours(model, r, states), ref)


# ----------------------------------------------------------------------------- distances by GJK


def test_gjk_distances_equal_mujoco():
    """distance, normal and fromto of the pairs MuJoCo measures by GJK and EPA (mj_geomDistanceCCD: cylinder,
    ellipsoid, capsule, box-box, a mesh; apart within the cutoff, beyond it, overlapping), of geoms and bodies,
    at 30 MuJoCo states of a fall."""
    path = ROOT / "tests" / "scenes" / "sensor_distance_gjk.xml"
    model, r = _compat(path)
    mjm = mujoco.MjModel.from_xml_path(str(path))
    states, ref = _mujoco_states(mjm, 300, 10, key=0)
    got = _ours(model, r, states)
    _check(model, got, ref)
    names = model.names["sensor"]
    d_overlap = ref[:, int(model.sensor_adr[names.index("d_overlap")])]
    assert (d_overlap < 0).all()  # EPA's depth
    beyond = ref[:, int(model.sensor_adr[names.index("d_cyl_cap_small")])]
    assert (beyond == 0.05).any() and (beyond < 0.05).any()  # the cutoff, and within it
