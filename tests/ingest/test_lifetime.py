"""`ingest.lifetime.return_freed_memory`: with it, a large block freed and asked for again
is again a mapping of its own (given back when freed); without it, glibc serves the second
from its heap. Each case runs in a fresh interpreter, so this process's allocator is left
as it was."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc" or not hasattr(ctypes.CDLL(None), "mallinfo2"),
    reason="glibc's allocator (mallinfo2: glibc 2.33 or later)")

PROBE = """
import ctypes, json, sys
from ingest.lifetime import return_freed_memory

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
fixed = return_freed_memory() if sys.argv[1] == "fixed" else False
size = 4 << 20
libc.free(libc.malloc(size))  # by default this raises the threshold past `size`
before = libc.mallinfo2().hblkhd
block = libc.malloc(size)
mapped = libc.mallinfo2().hblkhd - before
libc.free(block)
print(json.dumps({"fixed": fixed, "mapped": mapped, "after_free": libc.mallinfo2().hblkhd - before}))
"""


def probe(mode: str, **env: str) -> dict[str, int]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True,
                         env=clean | env)
    result: dict[str, int] = json.loads(out.stdout)
    return result


def test_a_large_block_freed_is_mapped_again_and_given_back() -> None:
    fixed = probe("fixed")
    assert fixed["fixed"]
    assert fixed["mapped"] >= 4 << 20  # its own mapping again
    assert fixed["after_free"] <= 0  # and unmapped when freed


def test_without_it_glibc_serves_the_block_from_its_heap() -> None:
    # what the setting changes: the default moved the threshold past the first block
    default = probe("default")
    assert not default["fixed"]
    assert default["mapped"] == 0


def test_an_operators_setting_is_left_as_it_is() -> None:
    # glibc's own variable, a threshold of 64 MiB: the block comes from the heap, as asked
    kept = probe("fixed", MALLOC_MMAP_THRESHOLD_=str(64 << 20))
    assert not kept["fixed"]
    assert kept["mapped"] == 0
