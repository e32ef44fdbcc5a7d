"""The serials each distinct `dice` value names, split once per audit and
vectorised (Arrow splits and numbers them in C): the replay, the checks and
the dice tally all read a row's dice through its value's category code, and
a log meets tens of thousands of distinct values (a set of dice a few
hundred rolls, every pair of it and every set of five), so splitting them
one by one in Python, in each of those places, cost more than the replay of
the rolls that name them.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

SEPARATOR = ","


class DiceValues:
    """What every distinct `dice` value (`values`, a category each) names:
    its serials as ids (`ids`, every value's end to end, in the order
    written), where each value's ids start and how many (`starts`,
    `counts`: one slot more, last, for code -1, nothing recorded: no
    dice), and the serials by id (`serials`, each once, in the order the
    values first name them: values in category order, serials in the
    order written). A value is split as `str.split(",")` splits it."""

    def __init__(self, values):
        #: the distinct values split (a pandas Index, an array or a list)
        self.values = values
        counts, self.ids, self.serials = _split(values)
        self.counts = np.append(counts, 0)
        self.starts = np.cumsum(self.counts) - self.counts

    def __len__(self) -> int:
        """How many values (not counting the last slot, no dice)."""
        return len(self.counts) - 1

    def names(self) -> list[str]:
        """The serials every value names, end to end (as `ids` numbers them)."""
        serials = self.serials
        return [serials[x] for x in self.ids.tolist()]

    def tuples(self) -> list[tuple[str, ...]]:
        """Per value its serials as a tuple, each serial interned (the replay
        looks dice up by serial many times per roll, and a lookup whose key
        is the very object stored is the quickest), then () for code -1."""
        serials = [sys.intern(s) for s in self.serials]
        names = [serials[x] for x in self.ids.tolist()]
        bounds = (self.starts + self.counts)[:-1].tolist()
        out, a = [], 0
        for b in bounds:
            out.append(tuple(names[a:b]))
            a = b
        out.append(())
        return out

    def rows_of(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For `codes` (category codes, -1 for none): of each serial they
        name, in order, the position among `codes` it belongs to and its id."""
        codes = np.asarray(codes, dtype=np.int64)
        counts = self.counts[codes]
        which = np.repeat(np.arange(len(codes)), counts)
        offset = self.starts[codes] - (np.cumsum(counts) - counts)
        return which, self.ids[np.arange(len(which)) + offset[which]]


def _split(values) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(how many serials each value names, their ids end to end, the
    serials by id): split and numbered by Arrow, or in Python where the
    values are not text Arrow can hold (numbers, lone surrogates)."""
    text = _as_arrow_text(values)
    if text is None:
        return _split_in_python(values)
    lists = pc.split_pattern(text, SEPARATOR)
    counts = pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    # (dictionary encoding numbers values in the order first met)
    encoded = pc.dictionary_encode(pc.list_flatten(lists))
    ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return counts, ids, encoded.dictionary.to_pylist()


def _as_arrow_text(values) -> pa.Array | None:
    array = values.array if isinstance(values, (pd.Index, pd.Series)) else values
    if not pd.api.types.is_string_dtype(getattr(array, "dtype", object)):
        return None
    try:
        text = pa.array(array)
    except (pa.ArrowException, UnicodeError, TypeError, ValueError):
        return None
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)) \
            or text.null_count:
        return None
    return text


def _split_in_python(values) -> tuple[np.ndarray, np.ndarray, list[str]]:
    named = [str(v).split(SEPARATOR) for v in list(values)]
    counts = np.fromiter(map(len, named), dtype=np.int64, count=len(named))
    number: dict[str, int] = {}
    ids = np.fromiter((number.setdefault(x, len(number)) for d in named for x in d),
                      dtype=np.int64, count=int(counts.sum()))
    return counts, ids, list(number)
