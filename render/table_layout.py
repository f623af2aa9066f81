"""Wide report tables laid out to fit a page: one row per group instead of one column per group × measure.

MHALO's Table 3 has a column for every subset × measure (``shapes · F1_M`` …, ``Average · IF``) and
Tri-HE's Table 2 one for every kind × rate; at laptop widths the last groups — the Average the table is
read for — sit behind a horizontal scroll. :func:`by_group` turns such a table long: a column naming
the group, then one column per measure. The marks (best and second best) keep their meaning: they are
computed on the wide table, where each column is one group's measure compared across rows, and follow
their cells. The wide table stays what the CSV download and the command line give.
"""

from __future__ import annotations

import pandas as pd

from analysis.reports.base import Table

SEPARATOR = " · "


def grouped_columns(frame: pd.DataFrame) -> list[str]:
    """The columns named ``"<group> · <measure>"``."""
    return [c for c in frame.columns if isinstance(c, str) and SEPARATOR in c]


def by_group(table: Table, group_name: str, first: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table with a row per (group, original row) and a column per measure, and its marks.

    Groups keep their order, except ``first`` (e.g. the Average), which leads; within a group the rows
    keep theirs. Cells a group lacks are missing (NaN). Returns the frame and the marks, both with a
    plain index, columns ``[other columns…, group_name, measures…]``.
    """
    frame = table.frame.reset_index(drop=True)
    grouped = grouped_columns(frame)
    if not grouped:
        raise ValueError(f"table {table.key!r} has no '<group> · <measure>' column")
    keep = [c for c in frame.columns if c not in grouped]
    split = [c.split(SEPARATOR, 1) for c in grouped]
    groups = list(dict.fromkeys(g for g, _ in split))
    if first in groups:
        groups.remove(first)
        groups.insert(0, first)
    measures = list(dict.fromkeys(m for _, m in split))
    marks = table.marks().reset_index(drop=True)
    frames, mark_frames = [], []
    for group in groups:
        part = frame[keep].copy()
        part_marks = pd.DataFrame("", index=frame.index, columns=[*keep, group_name, *measures])
        part.insert(len(keep), group_name, group)
        for measure in measures:
            column = f"{group}{SEPARATOR}{measure}"
            present = column in frame.columns
            part[measure] = frame[column] if present else float("nan")
            if present:
                part_marks[measure] = marks[column]
        frames.append(part)
        mark_frames.append(part_marks)
    return pd.concat(frames, ignore_index=True), pd.concat(mark_frames, ignore_index=True)
