"""Issue text (pure): stack frames in several formats innermost first, the files a trace runs
through, non-source kinds of files."""

from __future__ import annotations

import dataclasses

from semantic.analysis import query_terms
from semantic.fusion import file_penalty, frame_ranks, non_source_kind
from semantic.issue_text import Frame, frames
from semantic.ranking import DEFAULT

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
                 "scripts/manage_translations.py", "scripts/release.sh", "docs/_static/theme.js",
                 "django/contrib/admin/static/admin/js/actions.js", "js_tests/qunit/qunit.js", "extras/Makefile",
                 "Makefile", "tox.ini"):  # fmt: skip
        assert non_source_kind(path) is not None, path
    for path in (
        "django/db/models/query.py",
        "src/lib/parser.js",
        "nvm.sh",
        "lib/bats-core/test_functions.bash",
        "lib/matplotlib/widgets.py",
        "history.py",
    ):
        assert non_source_kind(path) is None, path
    off = dataclasses.replace(DEFAULT, non_source_penalty=1.0)
    ci = ".github/workflows/ci.yml"
    plain = query_terms("slider values are wrong")
    assert file_penalty(ci, plain) == DEFAULT.non_source_penalty * file_penalty(ci, plain, config=off) < 1.0
    asks = query_terms("the github workflow fails on windows")
    assert file_penalty(ci, asks) == file_penalty(ci, asks, config=off)
