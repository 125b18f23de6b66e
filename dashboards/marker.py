"""The run marker, and how a browser reads it: one home for the app that draws it and for
the browser tests, the screenshots and the page benchmark that wait on it.

Every script run of a session (a whole run, or a fragment's rerun alone) draws, as its
last element, a hidden marker holding the session's run count (`views.whole_run_started`,
`views.fragment_run`). A browser whose page holds a marker past the number read before an
action, with nothing left stale and nothing still loading its code, shows that action's
run whole. The predicates below are JavaScript functions for Playwright's
`page.evaluate` / `page.wait_for_function`; importing this module needs no Streamlit.
"""

from __future__ import annotations

#: the marker's attribute
ATTRIBUTE = "data-hk-run"



def _latest(attribute: str) -> str:
    """JavaScript: the largest count any marker of `attribute` holds on the page (0 with
    none). The attribute's value is read with `getAttribute`, so no `dataset` name is
    spelt apart from it."""
    return (f"Math.max(0, ...[...document.querySelectorAll('[{attribute}]')]"
            f".map(m => Number(m.getAttribute('{attribute}'))))")


_RUN = _latest(ATTRIBUTE)

#: the latest run drawn on the page (0 before any)
LAST_RUN = f"() => {_RUN}"

#: Nothing on the page is left from an earlier run (`data-stale="true"`: Streamlit's mark
#: for an element the current run has not redrawn yet) or still waiting for its code
#: (`data-testid="stSkeleton"`: the placeholder React draws while a lazily loaded
#: element's code arrives — a page's first metric, say, mounts after the run marker).
NOTHING_PENDING = "document.querySelector('[data-stale=\"true\"], [data-testid=stSkeleton]') === null"

#: a run later than `after` drawn whole, and nothing pending
SETTLED = f"(after) => {_RUN} > after && {NOTHING_PENDING}"

#: SETTLED, answering the page's clock (`performance.now()`) when it holds, null until then
SETTLED_AT = f"(after) => ({_RUN} > after && {NOTHING_PENDING}) ? performance.now() : null"

#: Every chart on screen has drawn its picture and every table its grid (both draw after
#: they mount: Vega-Lite's view, the data grid's canvas); charts and tables in a closed
#: expander or hidden tab are not waited for.
PICTURES_DRAWN = """() => [...document.querySelectorAll('[data-testid=stVegaLiteChart]')]
    .filter(e => e.offsetParent !== null && !e.closest('details:not([open])')).every(e => e.querySelector('svg, canvas'))
  && [...document.querySelectorAll('[data-testid=stDataFrame]')]
    .filter(e => e.offsetParent !== null && !e.closest('details:not([open])')).every(e => e.querySelector('canvas'))"""


def html(run: int) -> str:
    """The marker of run `run`, drawn by `st.html` as a run's last element."""
    return f'<span {ATTRIBUTE}="{run}" hidden></span>'


#: The Live panel's own marker: the count of its redraws (a fragment that reruns by itself,
#: `st.fragment(run_every=…)`, with no action of the browser's to wait for).
LIVE_ATTRIBUTE = "data-hk-live"

#: the Live panel redrawn past `after` times, and nothing pending
LIVE_REDRAWN = f"(after) => {_latest(LIVE_ATTRIBUTE)} > after && {NOTHING_PENDING}"


def live_html(redraws: int) -> str:
    """The Live panel's marker after `redraws` redraws, drawn as the panel's last element."""
    return f'<span {LIVE_ATTRIBUTE}="{redraws}" hidden></span>'
