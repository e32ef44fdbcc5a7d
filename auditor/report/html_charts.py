"""Chart geometry for the HTML report, computed here in Python: the template
only draws what this module measured, as inline SVG, so the page needs no
chart library and no script to show its charts.

Every function returns plain data (numbers rounded to two decimals, so the
same audit gives the same bytes, and text the template escapes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from auditor.codes import SEVERITIES

#: width of every chart in SVG user units (it scales to the page)
CHART_WIDTH = 960
#: time bins of a table's timeline: rolls, shooter changes and findings are
#: counted per bin, so a table of 100,000 events draws as fast as one of 100
TIMELINE_BINS = 240

_NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
                 21600, 43200, 86400, 172800, 604800)


def _r(x: float) -> float:
    return round(float(x), 2)


def nice_step(largest: float, ticks: int = 5) -> int:
    """A 1-2-5 step giving about `ticks` gridlines up to `largest`."""
    if largest <= 0:
        return 1
    raw = largest / ticks
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if mult * power >= raw:
            return max(1, int(mult * power))
    return max(1, int(10 * power))


# --- findings by code and severity ---------------------------------------


@dataclass
class BarRow:
    label: str
    y: float
    total: int
    segments: list[dict] = field(default_factory=list)
    total_x: float = 0.0


def code_bars(counts: list[tuple[str, dict[str, int]]]) -> dict:
    """A horizontal stacked bar per code, one segment per severity.
    `counts` is [(code, {severity: n})] in the order to draw."""
    label_w, right_w, row_h, top = 270, 70, 22, 24
    plot_w = CHART_WIDTH - label_w - right_w
    rows = [(code, sev) for code, sev in counts if sum(sev.values())]
    largest = max((sum(s.values()) for _, s in rows), default=0)
    step = nice_step(largest)
    scale_max = max(step, math.ceil(largest / step) * step) if largest else 1
    per = plot_w / scale_max
    out_rows = []
    for i, (code, sev) in enumerate(rows):
        y = top + i * row_h
        x = label_w
        row = BarRow(code, _r(y), sum(sev.values()))
        for s in SEVERITIES:
            n = sev.get(s, 0)
            if not n:
                continue
            w = n * per
            row.segments.append({"x": _r(x), "w": _r(max(w, 1.0)), "severity": s, "n": n})
            x += w
        row.total_x = _r(x + 6)
        out_rows.append(row)
    ticks = [{"x": _r(label_w + v * per), "label": f"{v:,}"}
             for v in range(0, scale_max + 1, step)]
    height = top + len(out_rows) * row_h + 8
    return {"width": CHART_WIDTH, "height": height, "rows": out_rows, "ticks": ticks,
            "label_w": label_w, "row_h": row_h, "top": top, "bottom": height - 8}


# --- one table's session timeline ----------------------------------------


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _utc(ns: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(ns) // 1000)


def _fmt_time(ns: int, with_seconds: bool = True) -> str:
    return _utc(ns).strftime("%H:%M:%S" if with_seconds else "%H:%M")


def _moment(ns: int) -> str:
    return _utc(ns).strftime("%Y-%m-%d %H:%M:%S")


def _fmt_day(ns: int) -> str:
    return _utc(ns).strftime("%Y-%m-%d")


def timeline(t0: int, t1: int, rolls: np.ndarray, accepts: np.ndarray,
             accept_seats: list[str], findings: pd.DataFrame) -> dict:
    """A table's session from its first to its last event (UTC nanoseconds):
    rolls per time bin as bars, shooter changes (`dice_accepted`) as
    vertical lines, findings as markers coloured by the worst severity in
    the bin. `findings` has columns ts_ns, severity, code, anchor (the id of
    the finding's entry in the list, or None when not listed)."""
    left, right = 70, 10
    plot_w = CHART_WIDTH - left - right
    span = max(int(t1) - int(t0), 1)
    fmt = _moment if _fmt_day(t0) != _fmt_day(t1) else _fmt_time
    bins = TIMELINE_BINS
    bin_w = plot_w / bins

    def which_bin(ns: np.ndarray) -> np.ndarray:
        idx = ((ns.astype(np.int64) - int(t0)) * bins) // span
        return np.clip(idx, 0, bins - 1)

    # rows of the drawing: findings on top, shooter changes, then rolls
    y_find, y_roll_top, y_roll_base, y_axis = 18, 40, 92, 100

    roll_bins = np.bincount(which_bin(rolls), minlength=bins) if len(rolls) else \
        np.zeros(bins, dtype=np.int64)
    peak = int(roll_bins.max()) if len(roll_bins) else 0
    roll_bars = []
    for b in np.flatnonzero(roll_bins):
        n = int(roll_bins[b])
        h = max(1.5, (y_roll_base - y_roll_top) * n / peak)
        lo = int(t0) + span * int(b) // bins
        hi = int(t0) + span * (int(b) + 1) // bins
        roll_bars.append({"x": _r(left + b * bin_w), "w": _r(max(bin_w - 0.6, 0.8)),
                          "y": _r(y_roll_base - h), "h": _r(h),
                          "title": f"{n} roll(s), {fmt(lo)}–{fmt(hi)} UTC"})

    shooter_lines = []
    if len(accepts):
        ab = which_bin(accepts)
        order = np.argsort(ab, kind="stable")
        for b in np.unique(ab):
            members = order[ab[order] == b]
            x = _r(left + (b + 0.5) * bin_w)
            if len(members) == 1:
                i = int(members[0])
                title = (f"shooter change: seat {accept_seats[i]} accepted the dice at "
                         f"{fmt(accepts[i])} UTC")
            else:
                title = (f"{len(members)} shooter changes, {fmt(accepts[members[0]])}–"
                         f"{fmt(accepts[members[-1]])} UTC")
            shooter_lines.append({"x": x, "title": title})

    marks = _marks(findings, which_bin, left, bin_w, y_find, fmt)
    ticks = _time_ticks(int(t0), int(t1), left, plot_w)
    return {"width": CHART_WIDTH, "height": y_axis + 22, "left": left,
            "right": CHART_WIDTH - right, "y_find": y_find, "y_roll_top": y_roll_top,
            "y_roll_base": y_roll_base, "y_axis": y_axis, "roll_bars": roll_bars,
            "roll_peak": peak, "shooter_lines": shooter_lines, "marks": marks,
            "ticks": ticks}


def _marks(findings: pd.DataFrame, which_bin, left: float, bin_w: float,
           y: float, fmt) -> list[dict]:
    """One marker per time bin holding findings, by numpy over all of them."""
    if not len(findings):
        return []
    bins = which_bin(findings["ts_ns"].to_numpy())
    ts = findings["ts_ns"].to_numpy(dtype=np.int64)
    sev = findings["severity"].map({s: i for i, s in enumerate(SEVERITIES)}) \
        .fillna(len(SEVERITIES) - 1).to_numpy(dtype=np.int64)
    code_names, code_idx = np.unique(findings["code"].astype(str).to_numpy(),
                                     return_inverse=True)
    anchors = findings["anchor"].tolist()
    used, inverse = np.unique(bins, return_inverse=True)
    k = len(used)
    sev_counts = np.zeros((k, len(SEVERITIES)), dtype=np.int64)
    np.add.at(sev_counts, (inverse, sev), 1)
    lo = np.full(k, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(k, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(lo, inverse, ts)
    np.maximum.at(hi, inverse, ts)
    width = len(code_names)
    pairs = np.unique(inverse.astype(np.int64) * width + code_idx)
    codes_in: list[list[str]] = [[] for _ in range(k)]
    for pair in pairs.tolist():
        codes_in[pair // width].append(str(code_names[pair % width]))
    first_anchor: dict[int, str] = {}
    for i, a in enumerate(anchors):
        if a and int(inverse[i]) not in first_anchor:
            first_anchor[int(inverse[i])] = a
    marks = []
    for j in range(k):
        counts = sev_counts[j]
        n = int(counts.sum())
        worst = SEVERITIES[int(np.flatnonzero(counts)[0])]
        parts = ", ".join(f"{int(counts[i])} {s}" for i, s in enumerate(SEVERITIES)
                          if counts[i])
        codes = codes_in[j]
        shown = ", ".join(codes[:3]) + (f" and {len(codes) - 3} more code(s)"
                                        if len(codes) > 3 else "")
        when = fmt(lo[j]) + (f"–{fmt(hi[j])}" if hi[j] != lo[j] else "")
        marks.append({
            "x": _r(left + (int(used[j]) + 0.5) * bin_w), "y": y,
            "r": _r(3.5 + min(4.0, math.log2(n))), "severity": worst,
            "anchor": first_anchor.get(j),
            "title": f"{n} finding(s) at {when} UTC ({parts}): {shown}",
        })
    return marks


def _time_ticks(t0: int, t1: int, left: float, plot_w: float) -> list[dict]:
    span_s = max((t1 - t0) / 1e9, 1.0)
    step = next((s for s in _NICE_SECONDS if span_s / s <= 8), _NICE_SECONDS[-1])
    step_ns = step * 1_000_000_000
    first = -(-t0 // step_ns) * step_ns
    multi_day = _fmt_day(t0) != _fmt_day(t1)
    ticks = []
    t = first
    while t <= t1:
        x = left + plot_w * (t - t0) / max(t1 - t0, 1)
        label = _fmt_time(t, with_seconds=step < 60)
        if multi_day and (step >= 86400 or _fmt_time(t, False) == "00:00"):
            label = _fmt_day(t) + (" " + label if step < 86400 else "")
        anchor = "start" if x - left < 20 else "end" if left + plot_w - x < 20 else "middle"
        ticks.append({"x": _r(x), "label": label, "anchor": anchor})
        t += step_ns
    return ticks
