"""Compile the records read by `mjcf.Reader` into a `Model`, as MuJoCo's compiler does.

Per body (in id order): geoms (fromto, orientation, mesh offsets, sizes, aabb,
mass and inertia), the inertial frame (explicit, or from geoms along the
principal axes), mass/inertia bounds, frames, joints (degrees to radians,
autolimits), sites. Then the tree arrays (addresses, qpos0, weld/root/tree
ids, simple/sameframe flags, the legacy sparse qM layout), the referencing
elements (pairs, excludes, equalities, tendons, actuators, sensors, keys),
and finally `setconst.set_constants` for everything that needs the mass
matrix at qpos0.
"""

from __future__ import annotations

import math
from typing import Dict, List


from rigidsim.errors import InputError
from rigidsim import model as M
from rigidsim.loaders import spatial as sp
from rigidsim.loaders.assemble import assemble
from rigidsim.loaders.mjcf_defaults import where as _where

NGEOMINFO = {0: 3, 1: 0, 2: 1, 3: 2, 4: 3, 5: 2, 6: 3, 7: 0, 8: 0}
MAXVAL = 1e10  # mjMAXVAL


class Compiler:
    def __init__(self, scene):
        self.sc = scene
        self.c = scene.compiler
        self.fn = scene.filename

    def fail(self, el, msg):
        raise InputError(msg, where=_where(el, self.fn))

    def body_id(self, name, el) -> int:
        """The id of body `name` ('world': 0), an InputError naming it when there is none."""
        return 0 if name == "world" else self.lookup(self.body_ids, name, "body", el)

    # ------------------------------------------------------------------ names
    def index(self, recs, kind: str) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for i, r in enumerate(recs):
            if r.name:
                if r.name in out:
                    self.fail(r.el, f"repeated {kind} name '{r.name}'")
                out[r.name] = i
        return out

    def lookup(self, table, name, kind, el, what="") -> int:
        if name is None or name not in table:
            self.fail(el, f"unknown {kind} '{name}'" + (f" in {what}" if what else f" in <{el.tag}>"))
        return table[name]

    # ------------------------------------------------------------------ geoms
    def compile_geom(self, g, body, infer: bool):
        s = g.spec
        el = g.el
        t = s["type"]
        if t == M.GEOM_SDF:
            self.fail(el, "geom type 'sdf' is not supported by rigidsim")
        if s["condim"] not in (1, 3, 4, 6):
            self.fail(el, f"invalid condim {s['condim']} in geom (expected 1, 3, 4 or 6)")
        mesh = hfield = None
        if t == M.GEOM_MESH or (s["mesh"] and t != M.GEOM_HFIELD):
            if not s["mesh"]:
                self.fail(el, "mesh geom needs a 'mesh' attribute")
            mid = self.lookup(self.mesh_ids, s["mesh"], "mesh", el)
            mesh = self.meshes[mid]
            g.dataid = mid
            if t != M.GEOM_MESH:
                self.fail(el, f"fitting a primitive geom to mesh '{s['mesh']}' is not supported by rigidsim; "
                              f"use type='mesh' or give the primitive's size")
        elif t == M.GEOM_HFIELD:
            if not s["hfield"]:
                self.fail(el, "hfield geom needs an 'hfield' attribute")
            hid = self.lookup(self.hfield_ids, s["hfield"], "hfield", el)
            hfield = self.hfields[hid]
            g.dataid = hid
        else:
            g.dataid = -1
        if t == M.GEOM_PLANE and body.weldid != 0:
            self.fail(el, "plane geoms are only allowed in static bodies")
        size = list(s["size"])
        quat = list(s["quat"])
        sp.normvec(quat)
        pos = list(s["pos"])
        if s["fromto"] is not None:
            if t not in (M.GEOM_CAPSULE, M.GEOM_CYLINDER, M.GEOM_ELLIPSOID, M.GEOM_BOX):
                self.fail(el, "fromto requires a capsule, cylinder, box or ellipsoid geom")
            if pos[0] or pos[1] or pos[2]:
                self.fail(el, "both pos and fromto defined in geom")
            ft = s["fromto"]
            vec = [ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]]
            size[1] = sp.normvec(vec) / 2
            if size[1] < sp.EPS:
                self.fail(el, "fromto points too close in geom")
            if t in (M.GEOM_ELLIPSOID, M.GEOM_BOX):
                size[2] = size[1]
                size[1] = size[0]
            pos = [(ft[0] + ft[3]) / 2, (ft[1] + ft[4]) / 2, (ft[2] + ft[5]) / 2]
            quat = sp.z2quat(vec)
        elif s["alt"] is not None:
            quat, err = sp.resolve_orientation(s["alt"], self.c["degree"], self.c["eulerseq"])
            if err:
                self.fail(el, f"orientation error in <geom>: {err}")
        if mesh is not None:
            if s["shellinertia"]:
                self.fail(el, "for mesh geoms, inertia should be specified in the mesh asset")
            pos, quat = sp.frameaccum(pos, quat, mesh.pos, mesh.quat)
        # size checks
        if t == M.GEOM_PLANE:
            if size[2] <= 0:
                self.fail(el, "plane size(3) must be positive")
        else:
            for i in range(NGEOMINFO[t]):
                if size[i] <= 0:
                    self.fail(el, f"size {i} must be positive in geom (got {size[i]})")
        if t == M.GEOM_HFIELD:
            hs = hfield.size
            size = [hs[0], hs[1], 0.25 * hs[2] + 0.5 * hs[3]]
        elif t == M.GEOM_MESH:
            a = mesh.aamm
            size = [max(abs(a[0]), abs(a[3])), max(abs(a[1]), abs(a[4])), max(abs(a[2]), abs(a[5]))]
        g.size, g.pos, g.quat = size, pos, quat
        g.aabb = self.geom_aabb(t, size, mesh, hfield)
        # mass and inertia
        g.mass, g.inertia = 0.0, [0.0, 0.0, 0.0]
        if infer:
            shell = bool(s["shellinertia"])
            vol = geom_volume(t, size, shell, mesh)
            m_attr = s["mass"]
            if not math.isnan(m_attr):
                if m_attr == 0:
                    g.mass = 0.0
                elif vol > sp.EPS:
                    g.mass = m_attr
                    g.inertia = geom_inertia(t, size, shell, g.mass, mesh)
            elif s["density"] != 0:
                g.mass = s["density"] * vol
                g.inertia = geom_inertia(t, size, shell, g.mass, mesh)
            if g.mass < 0 or min(g.inertia) < 0 or s["density"] < 0:
                self.fail(el, "mass, inertia or density are negative in geom")
        if g.frame is not None:
            g.pos, g.quat = sp.frameaccum(g.frame[0], g.frame[1], g.pos, g.quat)
        g.rbound = geom_rbound(t, size, mesh, hfield)

    @staticmethod
    def geom_aabb(t, size, mesh, hfield):
        if t == M.GEOM_HFIELD:
            hs = hfield.size
            aamm = [-hs[0], -hs[1], -hs[3], hs[0], hs[1], hs[2]]
        elif t == M.GEOM_SPHERE:
            aamm = [-size[0]] * 3 + [size[0]] * 3
        elif t == M.GEOM_CAPSULE:
            aamm = [-size[0], -size[0], -(size[0] + size[1]), size[0], size[0], size[0] + size[1]]
        elif t == M.GEOM_CYLINDER:
            aamm = [-size[0], -size[0], -size[1], size[0], size[0], size[1]]
        elif t == M.GEOM_MESH:
            aamm = list(mesh.aamm)
        elif t == M.GEOM_PLANE:
            aamm = [-MAXVAL, -MAXVAL, -MAXVAL, MAXVAL, MAXVAL, 0.0]
        else:
            aamm = [-size[0], -size[1], -size[2], size[0], size[1], size[2]]
        return [(aamm[3] + aamm[0]) / 2, (aamm[4] + aamm[1]) / 2, (aamm[5] + aamm[2]) / 2,
                (aamm[3] - aamm[0]) / 2, (aamm[4] - aamm[1]) / 2, (aamm[5] - aamm[2]) / 2]

    # ------------------------------------------------------------------ bodies
    def compile_body(self, b, bid):
        c = self.c
        for ch in b.children:
            cb = self.sc.bodies[ch]
            cb.weldid = ch if (cb.joints or cb.mocap) else b.weldid
        explicit = b.inertial is not None
        b.ipos = None
        b.iquat = [1.0, 0, 0, 0]
        b.mass, b.inertia = 0.0, [0.0, 0.0, 0.0]
        if explicit:
            it = b.inertial
            b.ipos = list(it.pos)
            b.mass = it.mass
            if it.full is not None:
                val, q = sp.full_inertia(it.full)
                if val is None:
                    self.fail(it.el, "fullinertia must have positive eigenvalues")
                b.inertia, b.iquat = val, q
            else:
                b.inertia = list(it.diag)
                b.iquat = list(it.quat)
            sp.normvec(b.iquat)
        grp = c["inertiagrouprange"]
        for g in b.geoms:
            gs = g.spec
            infer = bid > 0 and (not explicit or c["inertiafromgeom"] == 1) and grp[0] <= gs["group"] <= grp[1]
            self.compile_geom(g, b, infer)
        if bid > 0 and (c["inertiafromgeom"] == 1 or (not explicit and c["inertiafromgeom"] == 2)):
            self.inertia_from_geoms(b)
        if b.ipos is None:
            b.ipos = list(b.pos)
            b.iquat = list(b.quat)
        if bid > 0:
            b.mass = max(b.mass, c["boundmass"])
            b.inertia = [max(x, c["boundinertia"]) for x in b.inertia]
            I = b.inertia
            if b.mass < 0 or min(I) < 0:
                self.fail(b.el, "mass and inertia cannot be negative")
            if I[0] + I[1] < I[2] or I[0] + I[2] < I[1] or I[1] + I[2] < I[0]:
                if c["balanceinertia"]:
                    avg = (I[0] + I[1] + I[2]) / 3.0
                    b.inertia = [avg, avg, avg]
                else:
                    self.fail(b.el, "inertia must satisfy A + B >= C; use compiler balanceinertia to fix")
        if b.frame is not None:
            b.pos, b.quat = sp.frameaccum(b.frame[0], b.frame[1], b.pos, b.quat)
        b.contype = b.conaffinity = 0
        b.margin = 0.0
        for g in b.geoms:
            b.contype |= g.spec["contype"]
            b.conaffinity |= g.spec["conaffinity"]
            b.margin = max(b.margin, g.spec["margin"] + g.spec["gap"])  # MuJoCo 4.0: the geoms' margin + gap
        b.dofnum = 0
        for j in b.joints:
            b.dofnum += self.compile_joint(j)
        if b.dofnum > 6:
            self.fail(b.el, f"more than 6 dofs in body '{b.name}'")
        hasball = False
        for j in b.joints:
            if j.type in (M.JNT_BALL, M.JNT_HINGE) and hasball:
                self.fail(j.el, f"ball joint followed by a rotation in body '{b.name}'")
            hasball = hasball or j.type == M.JNT_BALL
        if b.mocap and (b.dofnum or b.parent != 0):
            self.fail(b.el, f"mocap body '{b.name}' is not a fixed child of world")
        for s in b.sites:
            self.compile_site(s)

    def inertia_from_geoms(self, b):
        grp = self.c["inertiagrouprange"]
        sel = [g for g in b.geoms if grp[0] <= g.spec["group"] <= grp[1] and g.mass > 0]
        if len(sel) == 1:
            g = sel[0]
            b.ipos, b.iquat, b.mass, b.inertia = list(g.pos), list(g.quat), g.mass, list(g.inertia)
        elif len(sel) > 1:
            mass = 0.0
            com = [0.0, 0.0, 0.0]
            for g in sel:
                mass += g.mass
                for k in range(3):
                    com[k] += g.mass * g.pos[k]
            if mass < sp.EPS:
                self.fail(b.el, "body mass is too small, cannot compute center of mass")
            ipos = [com[0] / mass, com[1] / mass, com[2] / mass]
            toti = [0.0] * 6
            for g in sel:
                d = [g.pos[0] - ipos[0], g.pos[1] - ipos[1], g.pos[2] - ipos[2]]
                i0 = sp.global_inertia(g.inertia, g.quat)
                i1 = sp.offcenter(g.mass, d)
                toti = [toti[k] + i0[k] + i1[k] for k in range(6)]
            val, q = sp.full_inertia(toti)
            if val is None:
                self.fail(b.el, "inertia from geoms must have positive eigenvalues")
            b.ipos, b.iquat, b.mass, b.inertia = ipos, q, mass, val

    def compile_joint(self, j) -> int:
        s = j.spec
        c = self.c
        t = s["type"]
        j.type = t
        sd = s["springdamper"]
        if (sd[0] or sd[1]) and (sd[0] <= 0 or sd[1] <= 0):
            self.fail(j.el, "when defined, springdamper values must be positive in joint")
        rng = list(s["range"])
        limited = s["limited"]
        if t == M.JNT_FREE:
            limited = 0
        elif limited == 2 and not c["autolimits"] and (rng[0] != 0 or rng[1] != 0):
            self.fail(j.el, "joint has 'range' but not 'limited'; set compiler autolimits='true', give limited "
                            "explicitly, or remove the range")
        is_lim = limited == 1 or (limited == 2 and rng[0] < rng[1])
        if is_lim:
            if rng[0] >= rng[1] and t != M.JNT_BALL:
                self.fail(j.el, "range[0] should be smaller than range[1] in joint")
            if rng[0] and t == M.JNT_BALL:
                self.fail(j.el, "range[0] should be 0 in ball joint")
            if c["degree"] and t in (M.JNT_HINGE, M.JNT_BALL):
                rng = [x * math.pi / 180.0 if x else x for x in rng]
        j.limited = is_lim
        afl = s["actuatorfrclimited"]
        afr = list(s["actuatorfrcrange"])
        if t in (M.JNT_FREE, M.JNT_BALL):
            afl = 0
        elif afl == 2 and not c["autolimits"] and (afr[0] != 0 or afr[1] != 0):
            self.fail(j.el, "joint has 'actuatorfrcrange' but not 'actuatorfrclimited'")
        j.actfrclimited = afl == 1 or (afl == 2 and afr[0] < afr[1])
        if j.actfrclimited and afr[0] >= afr[1]:
            self.fail(j.el, "actuatorfrcrange[0] should be smaller than actuatorfrcrange[1] in joint")
        j.range, j.actfrcrange = rng, afr
        axis = list(s["axis"])
        if t in (M.JNT_FREE, M.JNT_BALL):
            axis = [0.0, 0.0, 1.0]
        elif j.frame is not None:
            axis = sp.rot_vec_quat(axis, j.frame[1])
        if sp.normvec(axis) < sp.EPS:
            self.fail(j.el, "axis too small in joint")
        pos = list(s["pos"])
        if t == M.JNT_FREE:
            pos = [0.0, 0.0, 0.0]
        elif j.frame is not None:
            pos, _ = sp.frameaccum(j.frame[0], j.frame[1], pos, [1.0, 0, 0, 0])
        j.axis, j.pos = axis, pos
        ref, springref = s["ref"], s["springref"]
        if t == M.JNT_HINGE and c["degree"]:
            ref *= math.pi / 180.0
            springref *= math.pi / 180.0
        j.ref, j.springref = ref, springref
        return M.JNT_NV[t]

    def compile_site(self, s):
        sp_ = s.spec
        el = s.el
        t = sp_["type"]
        if t in (M.GEOM_MESH, M.GEOM_HFIELD, M.GEOM_PLANE, M.GEOM_SDF):
            self.fail(el, "meshes, hfields and planes are not allowed in site")
        size, pos, quat = list(sp_["size"]), list(sp_["pos"]), list(sp_["quat"])
        if sp_["fromto"] is not None:
            if t not in (M.GEOM_CAPSULE, M.GEOM_CYLINDER, M.GEOM_ELLIPSOID, M.GEOM_BOX):
                self.fail(el, "fromto requires a capsule, cylinder, box or ellipsoid site")
            if pos[0] or pos[1] or pos[2]:
                self.fail(el, "both pos and fromto defined in site")
            ft = sp_["fromto"]
            vec = [ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]]
            size[1] = sp.normvec(vec) / 2
            if size[1] < sp.EPS:
                self.fail(el, "fromto points too close in site")
            if t in (M.GEOM_ELLIPSOID, M.GEOM_BOX):
                size[2] = size[1]
                size[1] = size[0]
            pos = [(ft[0] + ft[3]) / 2, (ft[1] + ft[4]) / 2, (ft[2] + ft[5]) / 2]
            quat = sp.z2quat(vec)
        elif sp_["alt"] is not None:
            quat, err = sp.resolve_orientation(sp_["alt"], self.c["degree"], self.c["eulerseq"])
            if err:
                self.fail(el, f"orientation error in <site>: {err}")
        if s.frame is not None:
            pos, quat = sp.frameaccum(s.frame[0], s.frame[1], pos, quat)
        sp.normvec(quat)
        for i in range(NGEOMINFO[t]):
            if size[i] <= 0:
                self.fail(el, f"size {i} must be positive in site")
        s.size, s.pos, s.quat = size, pos, quat


def geom_volume(t, size, shell, mesh) -> float:
    pi = math.pi
    if t == M.GEOM_MESH:
        return mesh.volume
    if t == M.GEOM_SPHERE:
        r = size[0]
        return 4 * pi * r * r if shell else 4 * pi * r * r * r / 3
    if t == M.GEOM_CAPSULE:
        h, r = 2 * size[1], size[0]
        return 4 * pi * r * r + 2 * pi * r * h if shell else pi * (r * r * h + 4 * r * r * r / 3)
    if t == M.GEOM_CYLINDER:
        h, r = 2 * size[1], size[0]
        return 2 * pi * r * r + 2 * pi * r * h if shell else pi * r * r * h
    if t == M.GEOM_ELLIPSOID:
        if shell:
            p = 1.6075
            tmp = (size[0] * size[1]) ** p + (size[1] * size[2]) ** p + (size[2] * size[0]) ** p
            return 4 * pi * (tmp / 3) ** (1 / p)
        return 4 * pi * size[0] * size[1] * size[2] / 3
    if t in (M.GEOM_BOX, M.GEOM_HFIELD):
        if shell:
            return 8 * (size[0] * size[1] + size[1] * size[2] + size[2] * size[0])
        return size[0] * size[1] * size[2] * 8
    return 0.0


def geom_inertia(t, size, shell, mass, mesh) -> List[float]:
    if t == M.GEOM_MESH:
        b = mesh.boxsz
        return [mass * (b[1] * b[1] + b[2] * b[2]) / 3, mass * (b[0] * b[0] + b[2] * b[2]) / 3,
                mass * (b[0] * b[0] + b[1] * b[1]) / 3]
    if t == M.GEOM_SPHERE:
        v = 2 * mass * size[0] * size[0] / (3 if shell else 5)
        return [v, v, v]
    if t == M.GEOM_CAPSULE:
        hh, h, r = size[1], 2 * size[1], size[0]
        if not shell:
            sm = mass * 4 * r / (4 * r + 3 * h)
            cm = mass - sm
            i0 = cm * (3 * r * r + h * h) / 12
            i2 = cm * r * r / 2
            si = 2 * sm * r * r / 5
            i0 += si + sm * h * (3 * r + 2 * h) / 8
            return [i0, i0, i2 + si]
        As, Ac = 4 * math.pi * r * r, 2 * math.pi * r * h
        sm = mass * As / (As + Ac)
        cm = mass - sm
        i0 = cm * (6 * r * r + h * h) / 12
        i2 = cm * r * r
        si = 2 * sm * r * r / 3
        hc = r / 2
        hp = hh + hc
        i0 += si + sm * (hp * hp - hc * hc)
        return [i0, i0, i2 + si]
    if t == M.GEOM_CYLINDER:
        hh, h, r = size[1], 2 * size[1], size[0]
        if not shell:
            i0 = mass * (3 * r * r + h * h) / 12
            return [i0, i0, mass * r * r / 2]
        Ad, Ac = math.pi * r * r, 2 * math.pi * r * h
        md = mass * Ad / (2 * Ad + Ac)
        mc = mass - 2 * md
        i0 = mc * (6 * r * r + h * h) / 12
        i2 = mc * r * r
        idx = md * r * r / 4 + md * hh * hh
        idz = md * r * r / 2
        return [i0 + 2 * idx, i0 + 2 * idx, i2 + 2 * idz]
    if t == M.GEOM_ELLIPSOID:
        s00, s11, s22 = size[0] * size[0], size[1] * size[1], size[2] * size[2]
        if not shell:
            return [mass * (s11 + s22) / 5, mass * (s00 + s22) / 5, mass * (s00 + s11) / 5]
        eps = 1e-6
        Va = 4 * math.pi * size[0] * size[1] * size[2] / 3
        ae, be, ce = size[0] + eps, size[1] + eps, size[2] + eps
        Vb = 4 * math.pi * ae * be * ce / 3
        dens = mass / (Vb - Va)
        ma, mb = Va * dens, Vb * dens
        return [mb * (be * be + ce * ce) / 5 - ma * (s11 + s22) / 5,
                mb * (ae * ae + ce * ce) / 5 - ma * (s00 + s22) / 5,
                mb * (ae * ae + be * be) / 5 - ma * (s00 + s11) / 5]
    if t in (M.GEOM_BOX, M.GEOM_HFIELD):
        s00, s11, s22 = size[0] * size[0], size[1] * size[1], size[2] * size[2]
        if not shell:
            return [mass * (s11 + s22) / 3, mass * (s00 + s22) / 3, mass * (s00 + s11) / 3]
        lx, ly, lz = 2 * size[0], 2 * size[1], 2 * size[2]
        A0, A1, A2 = lx * ly, ly * lz, lz * lx
        At = 2 * (A0 + A1 + A2)
        m0, m1, m2 = mass * A0 / At, mass * A1 / At, mass * A2 / At
        Ix0, Iy0, Iz0 = m0 * ly * ly / 12, m0 * lx * lx / 12, m0 * (lx * lx + ly * ly) / 12
        Ix1, Iy1, Iz1 = m1 * (ly * ly + lz * lz) / 12, m1 * lz * lz / 12, m1 * ly * ly / 12
        Ix2, Iy2, Iz2 = m2 * lz * lz / 12, m2 * (lx * lx + lz * lz) / 12, m2 * lx * lx / 12
        return [2 * (m0 * s22 + m2 * s11 + Ix0 + Ix1 + Ix2), 2 * (m0 * s22 + m1 * s00 + Iy0 + Iy1 + Iy2),
                2 * (m1 * s00 + m2 * s11 + Iz0 + Iz1 + Iz2)]
    return [0.0, 0.0, 0.0]


def geom_rbound(t, size, mesh, hfield) -> float:
    if t == M.GEOM_HFIELD:
        hs = hfield.size
        return math.sqrt(hs[0] * hs[0] + hs[1] * hs[1] + max(hs[2] * hs[2], hs[3] * hs[3]))
    if t == M.GEOM_SPHERE:
        return size[0]
    if t == M.GEOM_CAPSULE:
        return size[0] + size[1]
    if t == M.GEOM_CYLINDER:
        return math.sqrt(size[0] * size[0] + size[1] * size[1])
    if t == M.GEOM_ELLIPSOID:
        return max(size[0], size[1], size[2])
    if t == M.GEOM_BOX:
        return math.sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2])
    if t == M.GEOM_MESH:
        a = mesh.aamm
        h = [max(abs(a[0]), abs(a[3])), max(abs(a[1]), abs(a[4])), max(abs(a[2]), abs(a[5]))]
        return math.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2])
    return 0.0


def compile_scene(scene) -> M.Model:
    return assemble(Compiler(scene))
