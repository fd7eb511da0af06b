"""Sizes read from a file's own headers, checked against the file before anything is allocated.

A weights or arrays file says in a header how many values it holds: a zip archive (PyTorch's .pt,
numpy's .npz) lists each entry's size, an .npy entry's header its dtype and shape, a safetensors
file's JSON header each tensor's dtype, shape and byte range. A loader allocates what the header
claims, so a 300-byte file claiming 10^12 values is a MemoryError, or a machine out of memory,
before any content check could run. These functions read the headers alone (standard library and
numpy's header parser; no array is read) and refuse, in one InputError naming the file and the
entry, any header whose sizes do not fit the bytes the file holds:

    zip_entries       every entry's size: stored as it is, or compressed at most DEFLATE_RATIO : 1
                      (deflate's own ceiling), the compressed sizes within the file's length
    npz_headers       each .npy entry's dtype and shape: its values fill its entry exactly
    safetensors_header  each tensor's dtype (a known one), shape and byte range: the ranges tile
                      the data after the header exactly, each as long as its shape and dtype say
"""

from __future__ import annotations

import io
import json
import math
import struct
import zipfile
from pathlib import Path

import numpy as np

from workflow_scripts.errors import InputError

DEFLATE_RATIO = 1032  # deflate cannot expand data more than this (RFC 1951 blocks of 258-byte copies)
SAFETENSORS_BYTES = {  # safetensors' dtype names and their sizes
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}
SAFETENSORS_FLOATS = {"F8_E4M3", "F8_E5M2", "F16", "BF16", "F32", "F64"}
MAX_SAFETENSORS_HEADER = 100_000_000  # the safetensors format's own limit on its JSON header


def zip_entries(
    data: bytes | Path, source: str, field: str = "file", kind: str = "a zip archive"
) -> list[zipfile.ZipInfo]:
    """The archive's entries (of its bytes, or of a file whose directory alone is read), each of a
    size its bytes can hold (module docstring); `field` and `kind` name the file and what it
    should be where it is not a zip archive at all."""
    size = data.stat().st_size if isinstance(data, Path) else len(data)
    try:
        with zipfile.ZipFile(data if isinstance(data, Path) else io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError) as error:
        raise InputError(source, field, f"not {kind}, or cut short ({error})") from None
    stored = 0
    for entry in entries:
        ceiling = entry.compress_size * (1 if entry.compress_type == zipfile.ZIP_STORED else DEFLATE_RATIO)
        if entry.file_size > ceiling:
            raise InputError(
                source,
                entry.filename,
                f"its header claims {entry.file_size:,} bytes from {entry.compress_size:,} stored: "
                "more than the entry can hold",
            )
        stored += entry.compress_size
    if stored > size:
        raise InputError(source, "file", f"its entries claim {stored:,} bytes, the file holds {size:,}")
    return entries


def npz_headers(data: bytes, source: str, field: str = "file") -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """{array name: (dtype, shape)} of an .npz, every entry's header checked against its size;
    no array is read."""
    headers = {}
    entries = zip_entries(data, source, field, "arrays of numbers (an .npz)")
    archive = zipfile.ZipFile(io.BytesIO(data))
    for entry in entries:
        name = entry.filename.removesuffix(".npy")
        try:
            with archive.open(entry) as handle:
                version = np.lib.format.read_magic(handle)
                reader = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = reader(handle, max_header_size=10_000)
                header_size = handle.tell()
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
            raise InputError(source, name, f"not an .npy array ({str(error).splitlines()[0]})") from None
        if dtype.hasobject:
            raise InputError(source, name, "an array of Python objects: want numbers")
        claimed = math.prod(shape) * dtype.itemsize
        if header_size + claimed != entry.file_size:
            raise InputError(
                source,
                name,
                f"its header claims {math.prod(shape):,} values of {dtype} ({claimed:,} bytes), "
                f"the entry holds {entry.file_size - header_size:,} bytes",
            )
        headers[name] = (dtype, tuple(shape))
    return headers


def safetensors_header(
    data: bytes, source: str, field: str = "weights"
) -> dict[str, tuple[str, tuple[int, ...]]]:
    """{tensor name: (safetensors dtype, shape)}, every size checked against the file (module
    docstring); no tensor is read. `field` names the file where it is no safetensors at all."""
    if len(data) < 8:
        raise InputError(source, field, "not safetensors (cut short)")
    (length,) = struct.unpack("<Q", data[:8])
    if length > min(len(data) - 8, MAX_SAFETENSORS_HEADER):
        raise InputError(
            source,
            field,
            f"not safetensors (its header claims {length:,} bytes, the file holds {len(data):,})",
        )
    try:
        header = json.loads(data[8 : 8 + length])
    except (UnicodeDecodeError, ValueError) as error:
        raise InputError(source, field, f"not safetensors (its header is not JSON: {error})") from None
    if not isinstance(header, dict):
        raise InputError(source, field, "not safetensors (its header is not a JSON object)")
    header.pop("__metadata__", None)
    tensors, ranges = {}, []
    for name, entry in header.items():
        dtype, shape, offsets = (
            entry.get(key) if isinstance(entry, dict) else None for key in ("dtype", "shape", "data_offsets")
        )
        if dtype not in SAFETENSORS_BYTES:
            raise InputError(source, name, f"dtype {dtype!r}: not a safetensors dtype")
        if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
            raise InputError(source, name, f"shape {shape!r}: want a list of sizes")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(n) is int for n in offsets)):
            raise InputError(source, name, f"data_offsets {offsets!r}: want [begin, end]")
        claimed = math.prod(shape) * SAFETENSORS_BYTES[dtype]
        if offsets[1] - offsets[0] != claimed:
            raise InputError(
                source,
                name,
                f"shape {shape} of {dtype} is {claimed:,} bytes, its data_offsets span {offsets[1] - offsets[0]:,}",
            )
        tensors[name] = (dtype, tuple(shape))
        ranges.append((offsets[0], offsets[1], name))
    end = 0
    for begin, stop, name in sorted(ranges):
        if begin != end:
            raise InputError(source, name, "its data_offsets leave a gap or overlap another tensor's")
        end = stop
    if 8 + length + end != len(data):
        raise InputError(
            source, "header", f"the tensors claim {end:,} bytes, the file holds {len(data) - 8 - length:,}"
        )
    return tensors
