"""Issue text read as an issue (pure): the template's boilerplate left out, stack frames in several
formats innermost first, the files a trace runs through, non-source kinds of files, the ``ident`` leg."""

from __future__ import annotations

import dataclasses

from semantic.analysis import query_terms
from semantic.fusion import file_penalty, frame_ranks, non_source_kind
from semantic.issue_text import Frame, frames, strip_boilerplate
from semantic.ranking import DEFAULT

TEMPLATE = """\
Slider fails with a tuple of initial values
<!-- Please search existing issues to avoid creating duplicates. -->
### Bug summary

RangeSlider raises an IndexError when valinit is given.

**Is your feature request related to a problem? Please describe.**
A clear and concise description of what the problem is.

### Code for reproduction

```python
slider = RangeSlider(ax, "x", 0, 1, valinit=[0.2, 0.8])
```

Steps to reproduce:
1. run the snippet

### Operating system

OSX Monterey

### Matplotlib Version

3.5.1

### Installation

pip

#### Versions
System:
    python: 3.8.10 (default, Jun  2 2021)
   machine: macOS-12.1-x86_64
numpy==1.21.2
scipy 1.7.3

### Additional information

_No response_
"""


def test_strip_boilerplate_keeps_what_the_issue_says_and_drops_the_templates_structure() -> None:
    kept = strip_boilerplate(TEMPLATE)
    for said in ("RangeSlider raises an IndexError", "valinit=[0.2, 0.8]", "run the snippet", "Slider fails"):
        assert said in kept, said
    for template in (
        "Bug summary",
        "Please describe",
        "clear and concise",
        "Please search",
        "Steps to reproduce",
        "Monterey",
        "3.5.1",
        "numpy==",
        "scipy 1.7",
        "machine:",
        "_No response_",
        "pip",
    ):
        assert template not in kept, template
    # a line that only looks like a label inside fenced code stays
    assert strip_boilerplate("```\nResult:\n```") == "```\nResult:\n```"


def test_a_long_query_without_boilerplate_loses_the_environment_words() -> None:
    on = dataclasses.replace(DEFAULT, strip_boilerplate=True)
    words_on = set(query_terms(TEMPLATE, config=on).prose) | set(query_terms(TEMPLATE, config=on).words)
    words_off = set(query_terms(TEMPLATE).prose) | set(query_terms(TEMPLATE).words)
    assert "monterey" in words_off and "monterey" not in words_on
    assert {"slider", "valinit"} <= words_on
    # a short query is never cleaned: it has no template
    assert (
        query_terms("Steps to reproduce the slider bug:", config=on).words
        == query_terms("Steps to reproduce the slider bug:").words
    )


CHAINED = """\
Traceback (most recent call last):
  File "/home/me/run.py", line 3, in <module>
    main()
  File "/venv/lib/python3.9/site-packages/pkg/core.py", line 10, in main
    helper()
  File "/venv/lib/python3.9/site-packages/pkg/_stats/agg.py", line 5, in helper
    raise KeyError(k)
KeyError: 'x'

During handling of the above exception, another exception occurred:

ValueError                                Traceback (most recent call last)
<ipython-input-2-1> in <module>
----> 1 go()

~/venv/lib/python3.9/site-packages/pkg/plot.py in go(x)
     10     return draw(x)

~/venv/lib/python3.9/site-packages/pkg/draw.py in draw(x)
---> 20     raise ValueError(x)
"""


def test_python_and_ipython_frames_innermost_first_last_trace_first() -> None:
    got = frames(CHAINED)
    assert got[:4] == (
        Frame("~/venv/lib/python3.9/site-packages/pkg/draw.py", "draw"),  # the error the user saw
        Frame("/venv/lib/python3.9/site-packages/pkg/_stats/agg.py", "helper"),  # the first trace's raise
        Frame("~/venv/lib/python3.9/site-packages/pkg/plot.py", "go"),
        Frame("/venv/lib/python3.9/site-packages/pkg/core.py", "main"),
    )
    assert Frame("/home/me/run.py", "") in got and not any(f.path.startswith("<") for f in got)


def test_javascript_java_and_go_frames_innermost_first() -> None:
    js = "TypeError: x is undefined\n    at parse (src/lib/parser.js:12:5)\n    at Object.<anonymous> (/app/index.js:3:1)\n"
    assert frames(js) == (Frame("src/lib/parser.js", "parse"), Frame("/app/index.js", ""))
    java = (
        'Exception in thread "main" java.lang.IllegalStateException: closed\n'
        "\tat okhttp3.internal.Http2Stream.write(Http2Stream.kt:44)\n"
        "\tat okhttp3.RealCall.execute(RealCall.kt:9)\n"
    )
    assert frames(java) == (
        Frame("okhttp3/internal/Http2Stream.kt", "write"),
        Frame("okhttp3/RealCall.kt", "execute"),
    )
    go = (
        "goroutine 1 [running]:\n"
        "github.com/spf13/viper.(*Viper).find(0xc0000, {0x1})\n"
        "\t/go/src/github.com/spf13/viper/viper.go:1200 +0x1f\n"
        "main.main()\n"
        "\t/app/main.go:9 +0x25\n"
    )
    assert frames(go) == (
        Frame("/go/src/github.com/spf13/viper/viper.go", "find"),
        Frame("/app/main.go", "main"),
    )
    assert frames("no trace here, just File names like a.py") == ()


def test_frame_ranks_match_paths_by_suffix_innermost_file_first() -> None:
    files = {
        "pkg/core.py",
        "pkg/_stats/agg.py",
        "pkg/plot.py",
        "pkg/draw.py",
        "tests/run.py",
        "other/draw.py",
    }
    ranked, functions = frame_ranks(files, frames(CHAINED))
    # draw.py: two files of that name, the frame's path matches only pkg/draw.py by its suffix
    assert ranked == {"pkg/draw.py": 0, "pkg/_stats/agg.py": 1, "pkg/plot.py": 2, "pkg/core.py": 3}
    assert functions["pkg/_stats/agg.py"] == {"helper": 1}
    # a user's script outside the repository matches nothing (run.py is not tests/run.py's suffix)
    assert "tests/run.py" not in ranked


def test_non_source_kinds_are_penalized_unless_asked() -> None:
    for path in (".github/ISSUE_TEMPLATE/feature_request.md", "docs/releases/4.2.txt", "CHANGES.rst",
                 "scripts/manage_translations.py", "tools/build.sh", "docs/_static/theme.js",
                 "django/contrib/admin/static/admin/js/actions.js"):  # fmt: skip
        assert non_source_kind(path) is not None, path
    for path in ("django/db/models/query.py", "src/lib/parser.js", "lib/matplotlib/widgets.py", "history.py"):
        assert non_source_kind(path) is None, path
    on = dataclasses.replace(DEFAULT, non_source_penalty=0.3)
    plain = query_terms("slider values are wrong")
    assert file_penalty(".github/workflows/ci.yml", plain, config=on) < file_penalty(
        ".github/workflows/ci.yml", plain
    )
    asks = query_terms("the github workflow fails on windows")
    assert file_penalty(".github/workflows/ci.yml", asks, config=on) == file_penalty(
        ".github/workflows/ci.yml", asks
    )


def test_an_issue_asks_for_tests_only_in_its_title() -> None:
    body = (
        "The slider value is clamped to its bounds before it is drawn, so a range given as initial "
        "values loses its upper handle whenever the axes are resized or the figure is saved again "
        "with another backend, and the callback receives stale numbers afterwards."
    )
    issue = "Slider clamps initial values\n" + body + "\nI ran tests/test_widgets.py and test_slider fails."
    title = dataclasses.replace(DEFAULT, issue_asks_title=True)
    terms = query_terms(issue, config=title)
    assert terms.long and "test" in terms.stems  # the body's test file and test name
    assert file_penalty("tests/test_widgets.py", terms) == 1.0  # today: the body asked for tests
    assert file_penalty("tests/test_widgets.py", terms, config=title) == DEFAULT.test_penalty
    asks = query_terms("test_slider fails in CI\n" + body, config=title)
    assert file_penalty("tests/test_widgets.py", asks, config=title) == 1.0
