"""Issue 29: the core's errors reach Python as typed exceptions
(engine/core/haftkhabis-py/src/error.rs): an operating system's refusal is an OSError that
keeps its errno (and its file when known), a missing input path a FileNotFoundError with
errno ENOENT, a spool that cannot be read back a SpoolError, a strict replay's stop a
ReplayError carrying its violation. Nothing needs a message read back with a regex."""

from __future__ import annotations

import errno
import pickle
from pathlib import Path
from typing import Any

import pytest

from engine import _core
from engine.simulate import SimConfig, simulate

HEADER = (b'{"game":"g","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito",'
          b'"players":["a","b","c","d"]}')


def _log(tmp_path: Path) -> Path:
    game = next(iter(simulate(SimConfig("bazito", games=1, seed=3))))
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\n".join(game.lines) + b"\n")
    return log


def _ignore(*_: Any) -> None:
    return None


def test_a_full_disk_is_an_oserror_with_its_errno(tmp_path: Path) -> None:
    """Writing a spool to /dev/full: ENOSPC, as the CLI's exit status for a full disk needs."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with pytest.raises(OSError) as caught:
        _core.route_files([str(_log(tmp_path))], ["/dev/full"], _ignore)
    assert caught.type is OSError and caught.value.errno == errno.ENOSPC
    assert caught.value.strerror and "(os error" not in str(caught.value)


def test_a_spool_that_cannot_be_made_is_the_subclass_its_errno_names(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        _core.route_files([str(_log(tmp_path))], [str(tmp_path / "no" / "spool")], _ignore)
    assert caught.value.errno == errno.ENOENT


def test_a_missing_spool_names_its_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.spool"
    with pytest.raises(FileNotFoundError) as caught:
        _core.Ingestor(batch=1).feed_spool(str(missing), [], _ignore)
    assert caught.value.errno == errno.ENOENT and caught.value.filename == str(missing)


def test_a_spool_cut_short_is_a_spool_error(tmp_path: Path) -> None:
    log = _log(tmp_path)
    spool = tmp_path / "0.spool"
    _core.route_files([str(log)], [str(spool)], _ignore)
    data = spool.read_bytes()
    spool.write_bytes(data[:-3])
    with pytest.raises(_core.SpoolError) as caught:
        _core.Ingestor(batch=1).feed_spool(str(spool), [str(log)], _ignore)
    assert isinstance(caught.value, OSError) and caught.value.errno is None
    assert str(spool) in str(caught.value)
    # the class is engine._core's own: it crosses a process boundary as itself
    assert type(pickle.loads(pickle.dumps(caught.value))) is _core.SpoolError


def test_a_spool_naming_a_file_the_batch_lacks_is_a_spool_error(tmp_path: Path) -> None:
    log = _log(tmp_path)
    spool = tmp_path / "0.spool"
    _core.route_files([str(log)], [str(spool)], _ignore)
    with pytest.raises(_core.SpoolError, match="names file 0 of 0"):
        _core.Ingestor(batch=1).feed_spool(str(spool), [], _ignore)


@pytest.mark.parametrize("call", ["expand_paths", "validate_json", "replay_game", "feed_paths"])
def test_a_missing_input_path_is_file_not_found_with_its_errno(tmp_path: Path, call: str) -> None:
    missing = str(tmp_path / "nope.jsonl")
    with pytest.raises(FileNotFoundError) as caught:
        if call == "expand_paths":
            _core.expand_paths([missing])
        elif call == "validate_json":
            _core.validate_json([missing])
        elif call == "replay_game":
            _core.replay_game([missing], "g")
        else:
            _core.Validator().feed_paths([missing])
    assert caught.value.errno == errno.ENOENT
    assert str(caught.value) == f"no such file or directory: {missing}"


def test_a_strict_replay_raises_replay_error_with_its_violation() -> None:
    run = _core.GameRun("g", strict=True)
    run.feed(HEADER, 1)
    with pytest.raises(_core.ReplayError) as caught:
        run.feed(b'{"game":"g","seq":1,"type":"pass","player":"b"}', 2)
    violation = caught.value.violation
    assert violation["code"] == "unexpected_event" and violation["line"] == 2
    assert str(caught.value) == f"seq 1: unexpected_event: {violation['message']}"


def test_what_a_write_callback_raises_comes_back_unchanged(tmp_path: Path) -> None:
    class Refused(Exception):
        pass

    def write(chunk: bytes) -> None:
        raise Refused(len(chunk))

    with pytest.raises(Refused):
        _core.validate_to([str(_log(tmp_path))], write)
