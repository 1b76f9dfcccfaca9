"""Rows as a Dagster table metadata value (typed columns, shown as a table in the UI)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dagster import MetadataValue, TableColumn, TableRecord, TableSchema

ROW_COUNT = "dagster/row_count"
TYPES = {bool: "bool", int: "int", float: "float"}


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> MetadataValue:
    """A table of `rows` with `columns` in this order; a column's type is its first value's."""
    types = {
        name: next((TYPES.get(type(row[name]), "string") for row in rows if name in row), "string")
        for name in columns
    }
    schema = TableSchema(columns=[TableColumn(name, types[name]) for name in columns])
    records = [TableRecord({name: row.get(name, "") for name in columns}) for row in rows]
    return MetadataValue.table(records, schema=schema)
