"""What the command prints for people, made safe for a terminal.

Player ids, game ids and messages come from logs and may hold any character, so a log could
otherwise retitle the window, clear the screen or rewrite what was printed (ESC, CSI and OSC
sequences, C1 controls, carriage returns). Two things, both defined here:

- `shown(value)`: a value as text for a Rich markup string — every control character
  spelled as a visible escape (`\\x1b`, `\\x9b`, `\\n`, `\\u202e`) and Rich's markup brackets
  escaped. Every value interpolated into people's output goes through it.
- `console()`: the only way the commands make a Rich console. Its render hook applies the
  same escaping to every text segment it writes (newlines and tabs of the layout excepted),
  so a value that missed `shown` still cannot reach the terminal as a control sequence; and
  it replaces no emoji codes (`validate` printed line 100 of a file as `log.jsonl💯`).

Machine output (`--json`, `query --format csv|json`) is written as is, byte for byte.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.markup import escape as _escape_markup
from rich.segment import Segment

# C0 controls, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates
# (they reorder what follows them on screen)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# the same, but the newlines and tabs a console's own layout writes
_CONTROL_IN_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _spell(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character spelled as a visible escape."""
    return _CONTROL.sub(_spell, text)


def shown(value: Any) -> str:
    """A value for a Rich markup string: control characters escaped, then markup escaped."""
    return _escape_markup(printable(value if isinstance(value, str) else str(value)))


class _Escaped:
    """A renderable whose text segments have their control characters escaped."""

    def __init__(self, inner: ConsoleRenderable) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            if segment.control or not _CONTROL_IN_LAYOUT.search(segment.text):
                yield segment
            else:
                yield Segment(_CONTROL_IN_LAYOUT.sub(_spell, segment.text), segment.style)


class _EscapeHook(RenderHook):
    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Escaped(r) for r in renderables]


def console(*, stderr: bool = False, wide: bool = False, **options: Any) -> Console:
    """A Rich console whose output cannot carry control sequences from the data. `wide`:
    200 columns when the stream is not a terminal, so tables written to a file are not cut."""
    stream = sys.stderr if stderr else sys.stdout
    if wide and not stream.isatty():
        options["width"] = 200
    made = Console(stderr=stderr, emoji=options.pop("emoji", False), **options)
    made.push_render_hook(_EscapeHook())
    return made


def join(values: Iterable[Any], sep: str = ", ") -> str:
    """`shown` values joined by `sep`."""
    return sep.join(shown(v) for v in values)
