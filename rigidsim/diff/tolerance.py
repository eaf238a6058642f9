"""`rigidsim diff`'s tolerances: --rtol/--atol parsed (globally or per field) and the field names checked."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Mapping, Sequence, Tuple

from rigidsim.errors import InputError

DEFAULT_RTOL = 0.0
DEFAULT_ATOL = 0.0


def _float(text: str, flag: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not math.isfinite(v) or v < 0:
        raise InputError(f"expected a non-negative number, got '{text}'", where=flag)
    return v


def _parse_tol(args: Iterable[str], flag: str, default: float) -> Tuple[float, Dict[str, float]]:
    """`--atol 1e-9` (the default of every field) and `--atol qpos=1e-9` (one field), repeatable and
    comma-separable; the last value given for a name wins."""
    per: Dict[str, float] = {}
    for arg in args:
        for item in str(arg).split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                name, _, val = item.partition("=")
                name = name.strip()
                if not name:
                    raise InputError(f"expected FIELD=VALUE or VALUE, got '{item}'", where=flag)
                per[name] = _float(val.strip(), f"{flag} {name}")
            else:
                default = _float(item, flag)
    return default, per


@dataclass
class Tolerance:
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    rtols: Dict[str, float] = field(default_factory=dict)
    atols: Dict[str, float] = field(default_factory=dict)

    def of(self, name: str) -> Tuple[float, float]:
        """(atol, rtol) of a field: its own, else its parent's ('contacts.force' -> 'contacts'), else the default."""
        def pick(per: Mapping[str, float], dflt: float) -> float:
            for key in (name, name.split(".")[0]):
                if key in per:
                    return per[key]
            return dflt

        return pick(self.atols, self.atol), pick(self.rtols, self.rtol)

    def as_dict(self) -> Dict[str, Any]:
        names = sorted(set(self.rtols) | set(self.atols))
        return {"rtol": self.rtol, "atol": self.atol,
                "fields": {n: {"rtol": self.of(n)[1], "atol": self.of(n)[0]} for n in names}}


def _check_names(names: Iterable[str], known: Sequence[str], flag: str) -> None:
    for n in names:
        if n not in known:
            close = difflib.get_close_matches(n, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise InputError(f"unknown field '{n}'; {hint}the fields are {', '.join(known)}", where=flag)
