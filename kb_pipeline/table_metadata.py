"""Rows as a Dagster table metadata value (typed columns, shown as a table in the UI)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

ROW_COUNT = "dagster/row_count"
TYPES = {bool: "bool", int: "int", float: "float"}


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> MetadataValue:
    """A table of `rows` with `columns` in this order; a column's type is its first value's."""
    types = {
        name: next(
            (TYPES.get(type(row[name]), "string") for row in rows if row.get(name) is not None),
            "string",
        )
        for name in columns
    }
    schema = TableSchema(columns=[TableColumn(name, types[name]) for name in columns])
    records = [TableRecord({name: row.get(name, "") for name in columns}) for row in rows]
    return MetadataValue.table(records, schema=schema)


def _plain(value: Any) -> Any:
    """A cell as a JSON-safe Python value (numpy scalars unwrapped, NaN as None)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and math.isnan(value):
        return None
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def frame_table(frame: pd.DataFrame, *, index: bool = False) -> MetadataValue:
    """A DataFrame as a table (its index as the first column when `index`)."""
    data = frame.reset_index() if index else frame.copy()
    data.columns = [str(c) for c in data.columns]
    rows = [{k: _plain(v) for k, v in row.items()} for row in data.to_dict("records")]
    return table(rows, list(data.columns))
