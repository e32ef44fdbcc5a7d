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
from typing import NamedTuple

import numpy as np

from auditor.codes import SEVERITIES

#: width of every chart in SVG user units (it scales to the page)
CHART_WIDTH = 960
#: time slices of a table's timeline: rolls, shooter changes and findings are
#: counted per slice, so a table of a million events draws as fast as one of
#: 100 (240 slices of 3.7 units: about what a reader can tell apart anyway)
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


def time_bins(ns: np.ndarray, t0, span, bins: int) -> np.ndarray:
    """The slice (0 to `bins` - 1) of each time `ns` in a timeline starting
    at `t0` and lasting `span` nanoseconds (scalars or arrays beside `ns`).
    Integer arithmetic, so a time falls in the same slice whoever asks; a
    span too long to multiply in int64 (over a year) is cut to microseconds."""
    span = np.maximum(np.asarray(span, dtype=np.int64), 1)
    d = np.clip(np.asarray(ns, dtype=np.int64) - np.asarray(t0, dtype=np.int64), 0, span)
    long = span > np.iinfo(np.int64).max // bins
    if long.any():
        d = np.where(long, d // 1000, d)
        span = np.where(long, span // 1000, span)
    return np.minimum((d * bins) // span, bins - 1)


def slice_text(ns: float) -> str:
    """The length of a timeline slice, rounded for a reader."""
    seconds = ns / 1e9
    for unit, size, below in (("ms", 0.001, 1), ("s", 1, 120), ("min", 60, 7200),
                              ("h", 3600, 172800)):
        if seconds < below:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / 86400:.3g} days"


class Marked(NamedTuple):
    """Findings to mark on a timeline, as arrays side by side: time (UTC
    nanoseconds), severity (its position in SEVERITIES), code, and the
    anchor of the finding's entry in the list (None when not listed)."""

    ts_ns: np.ndarray
    severity: np.ndarray
    code: np.ndarray
    anchor: list


def timeline(t0: int, t1: int, roll_bins: np.ndarray, shooter_bins: np.ndarray,
             findings: Marked) -> dict:
    """A table's session from its first to its last event (UTC nanoseconds),
    cut into `len(roll_bins)` equal slices: rolls per slice as bars, the
    slices holding shooter changes (`dice_accepted`) as vertical lines,
    findings as markers coloured by the worst severity in the slice. Bars
    and lines are one SVG path each (a table of a million events draws as
    fast as one of a hundred); each path's title says what a slice is, and
    what it hides."""
    left, right = 70, 10
    plot_w = CHART_WIDTH - left - right
    span = max(int(t1) - int(t0), 1)
    fmt = _moment if _fmt_day(t0) != _fmt_day(t1) else _fmt_time
    bins = len(roll_bins)
    bin_w = plot_w / bins
    slice_len = slice_text(span / bins)

    def which_bin(ns: np.ndarray) -> np.ndarray:
        return time_bins(ns, t0, span, bins)

    # rows of the drawing: findings on top, shooter changes, then rolls
    y_find, y_roll_top, y_roll_base, y_axis = 18, 40, 92, 100

    peak = int(roll_bins.max()) if len(roll_bins) else 0
    filled = np.flatnonzero(roll_bins)
    heights = np.maximum(1.5, (y_roll_base - y_roll_top) * roll_bins[filled] / max(peak, 1))
    w = _r(max(bin_w - 0.6, 0.8))
    xs = np.round(left + filled * bin_w, 2).tolist()
    # each number formatted once (thousands of bars): f"M{x},{base}v-{h}h{w}v{h}z"
    rise, run = f",{y_roll_base}v-", f"h{w}v"
    rolls_d = "".join([f"M{x}{rise}{h}{run}{h}z"
                       for x, h in zip(map(str, xs), map(str, np.round(heights, 2).tolist()))])
    rolls = int(roll_bins.sum())
    rolls_title = (f"{rolls:,} roll(s), counted per slice of {slice_len}: the tallest bar is "
                   f"{peak:,} roll(s) in one slice")

    xs = np.round(left + (np.flatnonzero(shooter_bins) + 0.5) * bin_w, 2).tolist()
    drop = f",{y_find + 8}V{y_roll_base}"
    shooters_d = "".join([f"M{x}{drop}" for x in xs])
    shooters = int(shooter_bins.sum())
    busiest = int(shooter_bins.max()) if len(shooter_bins) else 0
    shooters_title = (f"{shooters:,} shooter change(s) (dice_accepted): a line marks each "
                      f"slice of {slice_len} holding one or more (at most {busiest:,} in one "
                      f"slice)")

    marks = _marks(findings, which_bin, left, bin_w, y_find, fmt)
    ticks = _time_ticks(int(t0), int(t1), left, plot_w)
    return {"width": CHART_WIDTH, "height": y_axis + 22, "left": left,
            "right": CHART_WIDTH - right, "y_find": y_find, "y_roll_top": y_roll_top,
            "y_roll_base": y_roll_base, "y_axis": y_axis, "bins": bins, "slice": slice_len,
            "rolls_d": rolls_d, "rolls_title": rolls_title, "roll_peak": peak,
            "shooters_d": shooters_d, "shooters_title": shooters_title, "marks": marks,
            "ticks": ticks}


def _marks(findings: Marked, which_bin, left: float, bin_w: float,
           y: float, fmt) -> list[dict]:
    """One marker per time bin holding findings, by numpy over all of them."""
    if not len(findings.ts_ns):
        return []
    ts = findings.ts_ns
    bins = which_bin(ts)
    sev = findings.severity
    code_names, code_idx = np.unique(findings.code, return_inverse=True)
    anchors = findings.anchor
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
