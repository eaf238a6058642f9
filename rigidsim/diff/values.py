"""`rigidsim diff`'s comparison of values: the frame datasets, the model's arrays and the contacts (matched by
geom pair), read a block at a time so that memory stays bounded whatever the files' size."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import h5py
import numpy as np

from rigidsim.diff.reading import _File, _py
from rigidsim.diff.report import ContactsDiff, FieldDiff, QuantityDiff
from rigidsim.diff.tolerance import Tolerance
from rigidsim.errors import InputError

CONTACT_QUANTITIES = ("position", "normal", "force", "penetration")

BLOCK_BYTES = 8 << 20  # float64 bytes of one field read at once, per file (a few temporaries of this size)
CONTACT_ROWS = 1 << 20  # contact rows read at once, per file


def _errors(a: np.ndarray, b: np.ndarray, atol: float, rtol: float):
    """Elementwise |a - b| (inf where one is NaN or they are different infinities), the relative error
    |a - b| / |b| (0 where b is zero or not finite) and the mask of values beyond atol + rtol*|b|."""
    with np.errstate(all="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        d = np.where(same, 0.0, np.abs(a - b))
        d = np.where(np.isnan(d), np.inf, d)
        nz = (b != 0) & np.isfinite(b)
        rel = np.where(nz, d / np.where(nz, np.abs(b), 1.0), 0.0)
        finite = np.isfinite(a) & np.isfinite(b)
        beyond = ~same & (~finite | (d > atol + rtol * np.abs(b)))
    return d, rel, beyond


def _max(x: np.ndarray) -> float:
    return float(x.max()) if x.size else 0.0


def _is_text(ds: h5py.Dataset) -> bool:
    return ds.dtype.kind in "OSUV" or h5py.check_string_dtype(ds.dtype) is not None


def _num(v: Any) -> Any:
    return _py(v) if not isinstance(v, (float, np.floating)) else float(v)


class _Comparison:
    """One comparison of two open files."""

    def __init__(self, fa: _File, fb: _File, tol: Tolerance):
        self.fa, self.fb, self.tol = fa, fb, tol
        self._time = None
        self._names = {"a": fa.geom_names(), "b": fb.geom_names()}

    def geom_pair(self, geom, file: str = "a") -> Dict[str, Any]:
        """{'geom': [g1, g2]} of a contact row of file `file` ('a' or 'b'), with 'geom_names' [name1, name2]
        from that file's /model/geom_names (the other file's when it has none; '' for an unnamed geom) when
        either file holds them."""
        out: Dict[str, Any] = {"geom": [int(x) for x in geom]}
        names = self._names[file] or self._names["b" if file == "a" else "a"]
        if names:
            out["geom_names"] = [names[g] if 0 <= g < len(names) else "" for g in out["geom"]]
        return out

    def time_at(self, frame: int) -> Optional[float]:
        """A's time of a frame (B's when A lacks it), for the report."""
        for f in (self.fa, self.fb):
            ds = f.datasets.get("time")
            if ds is not None and ds.ndim == 1 and frame < ds.shape[0]:
                return float(f.read(ds, frame))
        return None

    # ---- one dataset with a frame axis
    def field(self, name: str) -> FieldDiff:
        da, db = self.fa.datasets.get(name), self.fb.datasets.get(name)
        atol, rtol = self.tol.of(name)
        if da is None or db is None:
            ds = da if da is not None else db
            return FieldDiff(name, "only_a" if da is not None else "only_b",
                             shape_a=list(da.shape) if da is not None else None,
                             shape_b=list(db.shape) if db is not None else None,
                             dtype_a=str(da.dtype) if da is not None else None,
                             dtype_b=str(db.dtype) if db is not None else None, atol=atol, rtol=rtol,
                             notes=[f"only {'A' if da is not None else 'B'} holds {name} {list(ds.shape)}"])
        r = FieldDiff(name, "equal", shape_a=list(da.shape), shape_b=list(db.shape), dtype_a=str(da.dtype),
                      dtype_b=str(db.dtype), atol=atol, rtol=rtol)
        if r.dtype_a != r.dtype_b:
            r.notes.append(f"dtypes differ: {r.dtype_a} vs {r.dtype_b} (values compared as float64)")
        sa, sb = tuple(da.shape), tuple(db.shape)
        if _is_text(da) or _is_text(db):
            if sa != sb or _is_text(da) != _is_text(db):
                r.status = "shapes_differ"
                return r
            eq = np.array_equal(self.fa.read(da), self.fb.read(db))
            r.status, r.n_beyond = ("equal", 0) if eq else ("differ", 1)
            return r
        if len(sa) != len(sb) or sa[2:] != sb[2:] or len(sa) == 0:
            if len(sa) == 0 and sa == sb:  # a scalar dataset
                d, rel, beyond = _errors(np.float64(self.fa.read(da)), np.float64(self.fb.read(db)), atol, rtol)
                r.max_abs, r.max_rel, r.n_beyond = float(d), float(rel), int(beyond)
                r.status = "differ" if beyond else "equal"
                return r
            r.status = "shapes_differ"
            r.notes.append(f"shapes differ beyond frames and envs: {list(sa)} vs {list(sb)}")
            return r
        T = min(sa[0], sb[0])
        r.frames_compared = T
        if sa[0] != sb[0]:
            r.notes.append(f"frames differ: A has {sa[0]}, B has {sb[0]} (the first {T} compared)")
        has_env = len(sa) >= 2
        E = min(sa[1], sb[1]) if has_env else None
        r.envs_compared = E
        if has_env and sa[1] != sb[1]:
            r.notes.append(f"envs differ: A has {sa[1]}, B has {sb[1]} (the first {E} compared)")
        row = int(np.prod((E,) + sa[2:], dtype=np.int64)) if has_env else 1
        step = max(1, BLOCK_BYTES // max(1, row * 8))
        max_abs = max_rel = 0.0
        for t0 in range(0, T, step):
            t1 = min(T, t0 + step)
            sel = np.s_[t0:t1, :E] if has_env else np.s_[t0:t1]
            a = self.fa.read(da, sel).astype(np.float64, copy=False)
            b = self.fb.read(db, sel).astype(np.float64, copy=False)
            d, rel, beyond = _errors(a, b, atol, rtol)
            max_abs, max_rel = max(max_abs, _max(d)), max(max_rel, _max(rel))
            n = int(beyond.sum())
            if n and r.first is None:
                idx = np.unravel_index(int(np.argmax(beyond)), beyond.shape)
                frame = t0 + int(idx[0])
                r.first = {"frame": frame, "env": int(idx[1]) if has_env else None,
                           "index": [int(i) for i in idx[2:]], "time": self.time_at(frame),
                           "a": float(a[idx]), "b": float(b[idx])}
            r.n_beyond += n
        r.max_abs, r.max_rel = max_abs, max_rel
        if r.n_beyond or sa[0] != sb[0] or (has_env and sa[1] != sb[1]):
            r.status = "differ"
        return r

    # ---- the /model group
    def model(self) -> FieldDiff:
        ga, gb = self.fa.f.get("model"), self.fb.f.get("model")
        atol, rtol = self.tol.of("model")
        if ga is None or gb is None:
            return FieldDiff("model", "only_a" if ga is not None else "only_b", atol=atol, rtol=rtol,
                             notes=[f"only {'A' if ga is not None else 'B'} holds /model"])
        r = FieldDiff("model", "equal", atol=atol, rtol=rtol, arrays=[])
        try:
            attrs_a = {k: _py(v) for k, v in ga.attrs.items()}
            attrs_b = {k: _py(v) for k, v in gb.attrs.items()}
            names_a = {k for k, v in ga.items() if isinstance(v, h5py.Dataset)}
            names_b = {k for k, v in gb.items() if isinstance(v, h5py.Dataset)}
        except (OSError, RuntimeError, KeyError) as e:
            raise self.fa.damaged("/model", e) from None
        for k in sorted(set(attrs_a) | set(attrs_b)):
            if attrs_a.get(k) != attrs_b.get(k):
                r.arrays.append({"name": f"@{k}", "status": "differ", "a": attrs_a.get(k), "b": attrs_b.get(k)})
                r.first = r.first or {"array": f"@{k}", "index": [], "a": attrs_a.get(k), "b": attrs_b.get(k)}
                r.n_beyond += 1
        max_abs = max_rel = 0.0
        for k in sorted(names_a | names_b):
            if k not in names_a or k not in names_b:
                r.arrays.append({"name": k, "status": "only_a" if k in names_a else "only_b"})
                r.n_beyond += 1
                continue
            da, db = ga[k], gb[k]
            a, b = self.fa.read(da), self.fb.read(db)
            entry = {"name": k, "shape_a": list(a.shape), "shape_b": list(b.shape)}
            if a.shape != b.shape or _is_text(da) != _is_text(db):
                r.arrays.append({**entry, "status": "shapes_differ"})
                r.n_beyond += 1
                continue
            if _is_text(da):
                ne = np.asarray(a != b)
                if ne.any():
                    idx = np.unravel_index(int(np.argmax(ne)), ne.shape) if ne.ndim else ()
                    r.arrays.append({**entry, "status": "differ", "n_beyond": int(ne.sum())})
                    r.first = r.first or {"array": k, "index": [int(i) for i in idx], "a": _py(a[idx]),
                                          "b": _py(b[idx])}
                    r.n_beyond += int(ne.sum())
                continue
            d, rel, beyond = _errors(a.astype(np.float64), b.astype(np.float64), atol, rtol)
            max_abs, max_rel = max(max_abs, _max(d)), max(max_rel, _max(rel))
            if beyond.any():
                idx = np.unravel_index(int(np.argmax(beyond)), beyond.shape) if beyond.ndim else ()
                r.arrays.append({**entry, "status": "differ", "max_abs": _max(d), "n_beyond": int(beyond.sum())})
                r.first = r.first or {"array": k, "index": [int(i) for i in idx], "a": _num(a[idx]), "b": _num(b[idx])}
                r.n_beyond += int(beyond.sum())
        r.max_abs, r.max_rel = max_abs, max_rel
        if r.arrays:
            r.status = "differ"
        return r

    # ---- contacts
    def contacts(self) -> ContactsDiff:
        ga, gb = self.fa.f.get("contacts"), self.fb.f.get("contacts")
        if ga is None or gb is None:
            r = ContactsDiff("only_a" if ga is not None else "only_b")
            r.notes.append(f"only {'A' if ga is not None else 'B'} holds contacts")
            return r
        r = ContactsDiff("equal")
        for q in CONTACT_QUANTITIES:
            atol, rtol = self.tol.of(f"contacts.{q}")
            r.quantities[q] = QuantityDiff(atol=atol, rtol=rtol)
        Ba, Bb = self._contact_envs(self.fa, ga), self._contact_envs(self.fb, gb)
        Ta, Tb = (len(ga["offsets"]) - 1) // Ba, (len(gb["offsets"]) - 1) // Bb
        T, E = min(Ta, Tb), min(Ba, Bb)
        r.frames_compared, r.envs_compared = T, E
        if Ta != Tb:
            r.notes.append(f"frames differ: A has {Ta}, B has {Tb} (the first {T} compared)")
        if Ba != Bb:
            r.notes.append(f"envs differ: A has {Ba}, B has {Bb} (the first {E} compared)")
        t0 = 0
        step = max(1, (1 << 16) // max(E, 1))
        while t0 < T:
            t1 = min(T, t0 + step)
            ca, cb = self._contact_block(self.fa, ga, Ba, t0, t1), self._contact_block(self.fb, gb, Bb, t0, t1)
            if t1 - t0 > 1 and max(ca["rows"], cb["rows"]) > CONTACT_ROWS:
                step = max(1, (t1 - t0) // 2)  # too many contacts at once: fewer frames per block
                continue
            self._compare_contact_block(r, t0, t1, E, self._load_rows(self.fa, ga, ca, E),
                                        self._load_rows(self.fb, gb, cb, E))
            t0 = t1
        if (r.unmatched_a or r.unmatched_b or r.count_mismatches or Ta != Tb or Ba != Bb
                or any(q.n_beyond for q in r.quantities.values())):
            r.status = "differ"
        return r

    def _contact_envs(self, f: _File, g: h5py.Group) -> int:
        B = f.B or 1
        n = len(g["offsets"]) - 1
        if B <= 0 or n < 0 or n % B:
            raise InputError(f"contacts/offsets holds {n + 1} entries, which is not frames x {B} envs + 1: "
                             f"the file is damaged", where=f.path)
        return B

    def _contact_block(self, f: _File, g: h5py.Group, B: int, t0: int, t1: int) -> Dict[str, Any]:
        offs = f.read(g["offsets"], np.s_[t0 * B: t1 * B + 1]).astype(np.int64)
        counts = np.diff(offs).reshape(t1 - t0, B)
        return {"offs": offs, "counts": counts, "rows": int(offs[-1] - offs[0]), "B": B, "t0": t0}

    def _load_rows(self, f: _File, g: h5py.Group, blk: Dict[str, Any], E: int) -> Dict[str, Any]:
        """The contact rows of a block of frames, of the first E envs, with each row's slot (frame - t0)*E + env."""
        offs, counts, B = blk["offs"], blk["counts"], blk["B"]
        r0, r1 = int(offs[0]), int(offs[-1])
        n_rows = len(g["geom"])
        if r0 < 0 or r1 > n_rows or np.any(counts < 0):
            raise InputError(f"contacts/offsets points past the {n_rows} contact rows: the file is truncated or "
                             f"damaged", where=f.path)
        slot_full = np.repeat(np.arange(counts.size, dtype=np.int64), counts.reshape(-1))
        frame, env = slot_full // B, slot_full % B
        keep = env < E
        rows = {k: f.read(g[k], np.s_[r0:r1])[keep] for k in ("geom",) + CONTACT_QUANTITIES}
        rows = {k: (v.astype(np.int64) if k == "geom" else v.astype(np.float64)) for k, v in rows.items()}
        rows["slot"] = frame[keep] * E + env[keep]
        rows["counts"] = counts[:, :E]
        return rows

    def _where(self, t0: int, E: int, slot: int) -> Dict[str, Any]:
        frame = t0 + int(slot) // E
        return {"frame": frame, "env": int(slot) % E, "time": self.time_at(frame)}

    def _compare_contact_block(self, r: ContactsDiff, t0: int, t1: int, E: int, A: Dict, B: Dict) -> None:
        mism = A["counts"] != B["counts"]
        if mism.any():
            r.count_mismatches += int(mism.sum())
            if r.first_count_difference is None:
                s = int(np.argmax(mism.reshape(-1)))
                r.first_count_difference = {**self._where(t0, E, s), "a": int(A["counts"].reshape(-1)[s]),
                                            "b": int(B["counts"].reshape(-1)[s])}
        ma, mb = self._match(A, B)
        r.matched += len(ma)
        un_a = np.ones(len(A["slot"]), bool)
        un_a[ma] = False
        un_b = np.ones(len(B["slot"]), bool)
        un_b[mb] = False
        r.unmatched_a += int(un_a.sum())
        r.unmatched_b += int(un_b.sum())
        if r.first_unmatched is None and (un_a.any() or un_b.any()):
            cands = []
            for X, un, name in ((A, un_a, "a"), (B, un_b, "b")):
                if un.any():
                    i = int(np.flatnonzero(un)[np.argmin(X["slot"][un])])
                    cands.append((int(X["slot"][i]), name, X["geom"][i]))
            slot, name, geom = min(cands, key=lambda c: (c[0], c[1]))
            r.first_unmatched = {**self._where(t0, E, slot), **self.geom_pair(geom, name), "file": name}
        if not len(ma):
            return
        order = np.argsort(A["slot"][ma], kind="stable")
        ma, mb = ma[order], mb[order]
        slots = A["slot"][ma]
        for q in CONTACT_QUANTITIES:
            qd = r.quantities[q]
            a, b = A[q][ma], B[q][mb]
            d, rel, beyond = _errors(a, b, qd.atol, qd.rtol)
            qd.max_abs, qd.max_rel = max(qd.max_abs, _max(d)), max(qd.max_rel, _max(rel))
            rows = beyond.reshape(len(ma), -1).any(axis=1)
            qd.n_beyond += int(rows.sum())
            if rows.any() and qd.first is None:
                i = int(np.argmax(rows))
                qd.first = {**self._where(t0, E, slots[i]), **self.geom_pair(A["geom"][ma[i]]),
                            "a": a[i].tolist(), "b": b[i].tolist()}

    @staticmethod
    def _match(A: Dict, B: Dict) -> Tuple[np.ndarray, np.ndarray]:
        """Row indices (into A, into B) of matched contacts: same slot and geom pair; several of one pair
        greedily by nearest position (the closest two first; ties in file order)."""
        if not len(A["slot"]) or not len(B["slot"]):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        g = np.concatenate([A["geom"], B["geom"]])
        lo = int(g.min())
        G = int(g.max()) - lo + 1

        def keys(X):
            return (X["slot"] * G + (X["geom"][:, 0] - lo)) * G + (X["geom"][:, 1] - lo)

        ka, kb = keys(A), keys(B)
        oa, ob = np.argsort(ka, kind="stable"), np.argsort(kb, kind="stable")
        ua, sa, na = np.unique(ka[oa], return_index=True, return_counts=True)
        ub, sb, nb = np.unique(kb[ob], return_index=True, return_counts=True)
        _, ia, ib = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
        out_a, out_b = [], []
        combos = np.stack([na[ia], nb[ib]], axis=1)
        for ca, cb in np.unique(combos, axis=0):
            sel = (combos[:, 0] == ca) & (combos[:, 1] == cb)
            rows_a = oa[sa[ia[sel]][:, None] + np.arange(ca)]  # [groups, ca] original rows
            rows_b = ob[sb[ib[sel]][:, None] + np.arange(cb)]
            if ca == 1 and cb == 1:
                out_a.append(rows_a[:, 0])
                out_b.append(rows_b[:, 0])
                continue
            with np.errstate(all="ignore"):
                dist = np.linalg.norm(A["position"][rows_a][:, :, None, :] - B["position"][rows_b][:, None, :, :],
                                      axis=-1)
            dist = np.nan_to_num(dist, nan=np.finfo(np.float64).max, posinf=np.finfo(np.float64).max)
            groups = np.arange(len(rows_a))
            for _ in range(min(ca, cb)):
                flat = np.argmin(dist.reshape(len(rows_a), -1), axis=1)
                i, j = flat // cb, flat % cb
                out_a.append(rows_a[groups, i])
                out_b.append(rows_b[groups, j])
                dist[groups, i, :] = np.inf
                dist[groups, :, j] = np.inf
        if not out_a:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(out_a), np.concatenate(out_b)
