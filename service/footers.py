"""Reading a few row groups of a Parquet part without parsing its whole footer.

A part's footer (its Thrift `FileMetaData`) describes every row group of the part, and
parsing it was most of the cost of reading one game's lines: at a million hands an `events`
part of 100 MB has 256 row groups and a 585 KB footer, which pyarrow parses in about 12 ms,
against 2–3 ms to read and decode the one or two row groups a game lies in. Keeping every
part's parsed footer instead costs about 3 MB a part (244 MB for the 84 parts of that
warehouse), and grows with the warehouse.

So the game index keeps, per part, a `FooterMap`: where each row group's description lies
in the footer (its byte range), and the footer's other fields as bytes (the schema, the
key-value metadata, …: about 2 KB). To read row groups `first..last` it reads those row
groups' descriptions from the part (one ranged read of a few KB), puts them between the
other fields in a footer of their own, has pyarrow parse that (`pq.read_metadata`, tens of
microseconds) and reads with it (`pq.ParquetFile(handle, metadata=…)`). A row group's
description holds the absolute offsets of its column chunks, so the short footer reads
the same bytes of the same file.

The layout is Parquet's (parquet.thrift): `FileMetaData` is a Thrift struct in the compact
protocol; its field 3 is `num_rows` (i64) and field 4 `row_groups` (list<RowGroup>). The
walk below interprets only those two and skips every other value by its compact type.
A footer it cannot walk (an encrypted footer, a type it does not know), or whose map does
not give back the row groups pyarrow read from the whole footer, gets no map: that part's
row groups are read with its whole footer, as before.
"""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa
import pyarrow.parquet as pq

MAGIC = b"PAR1"

# Thrift compact protocol types
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)

_NUM_ROWS, _ROW_GROUPS = 3, 4  # FileMetaData's fields


class Readable(Protocol):
    """What a part is read through: `pa.NativeFile`'s ranged read."""

    def read_at(self, nbytes: int, offset: int) -> bytes: ...


class FooterUnreadable(ValueError):
    """A footer this module cannot map (the part is then read with its whole footer)."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """An unsigned varint at `i`: its value and the index after it."""
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _list_header(size: int, kind: int) -> bytes:
    return bytes([(size << 4) | kind]) if size < 15 else bytes([0xF0 | kind]) + _encode_varint(size)


def _skip(buf: bytes, i: int, kind: int) -> int:
    """The index after the value of compact type `kind` at `i` (iterative: the footer's
    structs nest a few levels deep, but a row group holds thousands of values)."""
    open_: list[list[int] | None] = []  # the containers being skipped: None a struct, [left, type] a list
    while True:
        if kind in (_I32, _I64, _I16):
            while buf[i] & 0x80:
                i += 1
            i += 1
        elif kind == _BINARY:
            size, i = _varint(buf, i)
            i += size
        elif kind == _STRUCT:
            open_.append(None)
        elif kind in (_LIST, _SET):
            header = buf[i]
            i += 1
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size, i = _varint(buf, i)
            if element in (_TRUE, _FALSE, _BYTE):  # one byte each
                i += size
            elif size:
                open_.append([size, element])
        elif kind == _DOUBLE:
            i += 8
        elif kind == _BYTE:
            i += 1
        elif kind not in (_TRUE, _FALSE):  # a field's bool is in its header; maps: not in Parquet's
            raise FooterUnreadable(f"compact type {kind} at byte {i}")
        while True:  # the next value to skip: a struct's next field, a list's next element
            if not open_:
                return i
            top = open_[-1]
            if top is None:
                header = buf[i]
                i += 1
                if header == 0:  # the struct's end
                    open_.pop()
                    continue
                if not header >> 4:  # the long form: the field id follows
                    _, i = _varint(buf, i)
                kind = header & 0x0F
                break
            if not top[0]:
                open_.pop()
                continue
            top[0] -= 1
            kind = top[1]
            break


@dataclass(frozen=True, slots=True)
class FooterMap:
    """Where a part's footer describes each row group, and its other fields' bytes."""

    fields: tuple[tuple[int, bytes, bytes], ...]  # (field id, header, value) in footer order
    bounds: array  # row group i is described by the file's bytes bounds[i]:bounds[i + 1]
    rows: array  # row group i's rows

    @property
    def row_groups(self) -> int:
        return len(self.rows)

    def metadata(self, handle: Readable, first: int, last: int) -> pq.FileMetaData:
        """A footer describing row groups `first..last` (inclusive) of the part `handle`
        reads, parsed: its row groups are numbered from 0."""
        start, end = self.bounds[first], self.bounds[last + 1]
        described = handle.read_at(end - start, start)
        if len(described) != end - start:
            raise FooterUnreadable("the part is shorter than its footer says")
        pieces = []
        for field, header, value in self.fields:
            pieces.append(header)
            if field == _NUM_ROWS:
                rows = sum(self.rows[first:last + 1])
                pieces.append(_encode_varint((rows << 1) ^ (rows >> 63)))  # zigzag
            elif field == _ROW_GROUPS:
                pieces += (_list_header(last - first + 1, _STRUCT), described)
            else:
                pieces.append(value)
        footer = b"".join(pieces) + b"\x00"  # the struct's end
        try:
            found = pq.read_metadata(pa.BufferReader(
                MAGIC + footer + struct.pack("<I", len(footer)) + MAGIC))
        except (OSError, pa.ArrowException) as exc:  # the bytes read are no row groups' description
            raise FooterUnreadable(f"the short footer does not parse: {exc}") from None
        if found.num_row_groups != last - first + 1 or any(
                found.row_group(n).num_rows != self.rows[first + n] for n in range(found.num_row_groups)):
            raise FooterUnreadable("the footer's row groups are not where its map says")
        return found


def footer_bytes(handle: pa.NativeFile) -> tuple[bytes, int]:
    """The footer of the part `handle` reads, and its offset in the file."""
    size = handle.size()
    if size < 12:
        raise FooterUnreadable("too short for a Parquet file")
    tail = handle.read_at(8, size - 8)
    if tail[4:] != MAGIC:  # "PARE": an encrypted footer
        raise FooterUnreadable("not a plain Parquet footer")
    length = struct.unpack("<I", tail[:4])[0]
    offset = size - 8 - length
    if offset < 4:
        raise FooterUnreadable("the footer's length is past the file's start")
    return handle.read_at(length, offset), offset


def map_footer(footer: bytes, offset: int, metadata: pq.FileMetaData) -> FooterMap:
    """The map of `footer` (found at `offset` in its file), checked against `metadata`, the
    whole footer as pyarrow read it: the first and last row groups read through the map
    must be those pyarrow read."""
    try:
        return _map_footer(footer, offset, metadata)
    except IndexError:
        raise FooterUnreadable("the footer ends inside a value") from None


def _map_footer(footer: bytes, offset: int, metadata: pq.FileMetaData) -> FooterMap:
    fields: list[tuple[int, bytes, bytes]] = []
    bounds = array("q")
    field, i = 0, 0
    while True:
        start = i
        header = footer[i]
        i += 1
        if header == 0:
            break
        if header >> 4:
            field += header >> 4
        else:
            raw, i = _varint(footer, i)
            field = (raw >> 1) ^ -(raw & 1)
        kind, begin = header & 0x0F, i
        if field == _ROW_GROUPS:
            if kind != _LIST:
                raise FooterUnreadable("row_groups is not a list")
            listed = footer[i]
            i += 1
            size = listed >> 4
            if size == 15:
                size, i = _varint(footer, i)
            if listed & 0x0F != _STRUCT:
                raise FooterUnreadable("row_groups does not list structs")
            for _ in range(size):
                bounds.append(offset + i)
                i = _skip(footer, i, _STRUCT)
            bounds.append(offset + i)
        else:
            i = _skip(footer, i, kind)
        # the row groups' descriptions are not kept: they are read from the part when needed
        fields.append((field, footer[start:begin], b"" if field == _ROW_GROUPS else footer[begin:i]))
    if i != len(footer):
        raise FooterUnreadable("the footer does not end where its struct does")
    if {f for f, _, _ in fields} & {_NUM_ROWS, _ROW_GROUPS} != {_NUM_ROWS, _ROW_GROUPS}:
        raise FooterUnreadable("no num_rows or row_groups")
    groups = metadata.num_row_groups
    if len(bounds) != groups + 1:
        raise FooterUnreadable("another number of row groups than pyarrow read")
    mapped = FooterMap(tuple(fields), bounds,
                       array("q", (metadata.row_group(n).num_rows for n in range(groups))))
    if groups:
        view = _Shifted(footer, offset)  # the footer's bytes, read at their offsets in the file
        for n in {0, groups - 1}:
            if mapped.metadata(view, n, n).row_group(0).to_dict() != metadata.row_group(n).to_dict():
                raise FooterUnreadable(f"row group {n} read through the map is not pyarrow's")
    return mapped


class _Shifted:
    """A footer's bytes read as if from the file they came from (`map_footer`'s check)."""

    def __init__(self, footer: bytes, offset: int) -> None:
        self.footer, self.offset = footer, offset

    def read_at(self, nbytes: int, offset: int) -> bytes:
        return self.footer[offset - self.offset:offset - self.offset + nbytes]
