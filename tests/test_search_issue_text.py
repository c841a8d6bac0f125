"""Long queries and issue text: what an issue names is pulled out and leads; prose is capped.

Pure analysis (mentions, named files) and the real search over a small indexed repo where
the prose of a pasted issue points at the wrong file and only its traceback names the right one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic import lexical
from semantic.analysis import issue_title, mentions, query_terms
from semantic.lexical import cap_terms
from semantic.path_leg import named_files
from semantic.ranking import DEFAULT
from storage.db import Store

TRACEBACK = """\
Traceback (most recent call last):
  File "/home/me/app/run.py", line 3, in <module>
    main()
  File "/usr/lib/python3.12/site-packages/shipping/rates.py", line 41, in quote_parcel
    return _zone_table(origin)[dest]
  File "/usr/lib/python3.12/site-packages/shipping/rates.py", line 8, in run
    return self.table[key]
KeyError: 'XX'
"""


def test_mentions_reads_frames_paths_quoted_code_and_errors() -> None:
    text = (
        "Calling `Carrier.quote()` fails; see shipping/zones.py and e.g. https://example.com/a.py\n"
        "```python\nrates.quote_parcel(order, carrier=fedex_client)\n```\n" + TRACEBACK
    )
    m = mentions(text)
    # Innermost traceback frame first, then quoted code, then error classes.
    assert m.names[:2] == ("run", "quote_parcel")
    assert "Carrier.quote" in m.names and "fedex_client" in m.names and "KeyError" in m.names
    assert m.names.index("quote_parcel") < m.names.index("Carrier.quote") < m.names.index("KeyError")
    assert "self.table" not in m.names
    assert m.paths[:2] == ("/usr/lib/python3.12/site-packages/shipping/rates.py", "/home/me/app/run.py")
    assert "shipping/zones.py" in m.paths
    assert not any("example.com" in p for p in m.paths) and "e.g" not in m.names


def test_named_files_resolve_absolute_traceback_paths_by_their_tail() -> None:
    files = ["src/shipping/rates.py", "src/shipping/zones.py", "tests/test_rates.py", "src/run.py"]
    got = named_files(
        files, ["/usr/lib/python3.12/site-packages/shipping/rates.py", "zones.py", "nowhere.py"]
    )
    assert got == ["src/shipping/rates.py", "src/shipping/zones.py"]


def test_a_short_query_is_unchanged_by_the_long_query_path() -> None:
    t = query_terms("retry the ERP call in `send_order`")
    assert not t.long and t.identifiers == ("send_order",) and "retry" in t.words


FILES = {
    "src/shipping/rates.py": '''
        def quote_parcel(origin, dest):
            """Price a parcel between two zones."""
            return _zone_table(origin)[dest]


        def _zone_table(origin):
            return ZoneLookup().run(origin)


        class ZoneLookup:
            def run(self, key):
                return self.table[key]
        ''',
    "src/shipping/labels.py": '''
        def print_label(parcel, printer):
            """Print a parcel label: the weight, the price, the customer, the delivery address."""
            customer = parcel.customer
            return printer.print(customer.address, parcel.weight, parcel.price, customer.delivery)


        class LabelJob:
            def run(self, parcel, printer):
                """Print the label of a parcel for the customer: price, weight, delivery address."""
                return print_label(parcel, printer)
        ''',
    "src/billing/invoice.py": '''
        def invoice_customer(customer, parcel):
            """Send the customer an invoice for the delivery of a parcel."""
            return customer, parcel.price
        ''',
}

PROSE = (
    "When a customer prints a label for a parcel the price shown for the delivery is wrong and then "
    "the invoice sent to the customer has no price at all. The label printer shows the weight and "
    "the address correctly, only the price is missing, which makes every customer call support. "
)


@pytest.fixture
def search(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> SemanticSearch:
    root = make_repo(FILES)
    store = Store(tmp_path / "idx" / "index.db")
    index_root(root, store)
    return SemanticSearch(store)


def test_a_pasted_issue_ranks_what_its_traceback_names(search: SemanticSearch) -> None:
    text = PROSE * 8 + TRACEBACK
    terms = query_terms(text)
    assert terms.long and len(terms.prose) > DEFAULT.long_query_words
    capped = cap_terms(search.store, terms)
    assert len(capped.words) <= len(terms.words) + DEFAULT.max_prose_words
    resp = search.search(text, k=5, legs=("bm25", "symbols", "path"))
    assert resp.items[0].path == "src/shipping/rates.py", [h.path for h in resp.items]
    code = search.search(text, k=3, legs=("bm25", "symbols", "path"), view="code")
    # The innermost frame's `run` is the one in rates.py, not the label job's.
    assert [(h.path, h.symbol) for h in code.items[:2]] == [
        ("src/shipping/rates.py", "ZoneLookup.run"),
        ("src/shipping/rates.py", "quote_parcel"),
    ], [(h.path, h.symbol) for h in code.items]


MANY = {
    **FILES,
    **{
        f"src/records/batch_{i}.py": f'''
            def handle_record_{i}(record, parcel):
                """Process the record of a parcel and store the record."""
                return record.process(parcel)
            '''
        for i in range(30)
    },
}


@pytest.fixture
def many(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> SemanticSearch:
    root = make_repo(MANY)
    store = Store(tmp_path / "idx" / "many.db")
    index_root(root, store)
    return SemanticSearch(store)


def _sent(match: str) -> list[str]:
    """The terms (and phrases) a MATCH expression sends to FTS5."""
    return re.findall(r'"((?:[^"]|"")+)"', match)


def test_a_2000_word_issue_sends_a_bounded_match_and_its_traceback_leads(many: SemanticSearch) -> None:
    """Thousands of words, 1,500 of them distinct and absent from the index, names whose words
    are in every chunk (``handle_record_3``: record, handle), and a traceback: the MATCH sent to
    FTS5 holds only terms the index has, none in most chunks, within the postings budget; the
    traceback's file and innermost frame lead."""
    store = many.store
    noise = " ".join(f"zq{i}x" for i in range(1500))
    text = (
        PROSE * 12
        + " The records are processed by `handle_record_3` and handle_record_7 before the parcel is stored. "
        + noise
        + "\n"
        + TRACEBACK
    )
    assert len(text.split()) > 2000
    terms = query_terms(text)
    capped = cap_terms(store, terms)
    assert capped.match is not None
    sent = _sent(capped.match)
    chunks = store.chunk_count()
    df = lexical.doc_freqs(store, [w for t in sent for w in t.split()], cap=chunks)
    # Only terms the index holds, none in more than 3 x max_prose_df of the chunks; within budget.
    assert all(0 < df[w] <= 3 * DEFAULT.max_prose_df * chunks for t in sent for w in t.split()), (sent, df)
    assert not any(t.startswith("zq") for t in sent)
    assert "record" not in sent and "parcel" not in sent  # in nearly every chunk
    assert len(sent) <= 2 * (DEFAULT.max_names + DEFAULT.max_prose_words)
    assert DEFAULT.match_postings is not None
    assert sum(df[w] for t in sent for w in t.split()) <= DEFAULT.match_postings
    # The symbol leg's MATCH: names' words only, none absent from the symbol table.
    assert capped.name_match is not None and not any(t.startswith("zq") for t in _sent(capped.name_match))
    # The names still reach the index whole: the traceback's frames and the quoted name.
    assert {"quote_parcel", "handle_record_3"} <= set(sent)
    resp = many.search(text, k=5, legs=("bm25", "symbols", "path"))
    assert resp.items[0].path == "src/shipping/rates.py", [h.path for h in resp.items]
    code = many.search(text, k=3, legs=("bm25", "symbols", "path"), view="code")
    assert (code.items[0].path, code.items[0].symbol) == ("src/shipping/rates.py", "ZoneLookup.run")


def test_budgeted_match_keeps_the_rarest_clauses_and_drops_common_phrase_words() -> None:
    clauses = [
        ("common", ()),
        ("instancetype", ("instance", "type")),
        ("rare", ()),
        ("absent", ()),
        ("mid", ()),
    ]
    df = {"common": 90, "instancetype": 3, "instance": 10, "type": 80, "rare": 2, "mid": 40}
    # 'type' is in more chunks than `most`: the phrase falls back to the whole name.
    assert lexical.budgeted_match(clauses, df, budget=1000, most=50) == '"instancetype" OR "rare" OR "mid"'
    # A budget of 10 postings: the rarest fit ('rare' 2, 'instancetype' 3), 'mid' (40) does not.
    assert lexical.budgeted_match(clauses, df, budget=10, most=100) == '"instancetype" OR "rare"'
    assert lexical.budgeted_match(clauses, df, budget=1000, most=100) == (
        '"common" OR ("instancetype" OR "instance type") OR "rare" OR "mid"'
    )


def test_document_frequency_is_counted_as_the_index_tokenizes(search: SemanticSearch) -> None:
    """The index stems (porter): ``invoices`` in a query is the ``invoice`` of the index. A long
    query's rare prose word keeps its weight whatever form the issue writes it in."""
    store = search.store
    assert lexical.doc_freqs(store, ["invoices", "invoice", "customers", "nosuchword"], cap=100) == {
        "invoices": 1,
        "invoice": 1,
        "customers": 2,
        "nosuchword": 0,
    }
    text = " ".join(f"zq{i}x" for i in range(40)) + " The invoices are wrong."
    capped = cap_terms(store, query_terms(text))
    assert "invoices" in capped.words and capped.match is not None and '"invoices"' in capped.match


TEMPLATE_REPO = {
    ".github/ISSUE_TEMPLATE/feature_request.md": """\
        ---
        name: Feature request
        about: Suggest an idea for this project
        ---
        **Is your feature request related to a problem? Please describe.**
        A clear and concise description of what the problem is. Ex. I'm always frustrated when [...]

        **Describe the solution you'd like**
        A clear and concise description of what you want to happen.

        **Describe alternatives you've considered**
        A clear and concise description of any alternative solutions or features you've considered.
        """,
    "src/plotkit/core.py": '''
        from plotkit._stats.aggregate import summarize


        class Plotter:
            """The plotting core: lays out the figure, then asks each layer for its statistics."""

            def plot(self, data, layers):
                for layer in layers:
                    self._compute(layer, data)
                return self

            def _compute(self, layer, data):
                return self._stat_of(layer)(data)

            def _stat_of(self, layer):
                return lambda data: summarize(data, layer.by)
        ''',
    "src/plotkit/_stats/aggregate.py": '''
        def summarize(data, by):
            """Group the rows by a column and aggregate each group."""
            groups = {}
            for row in data:
                groups.setdefault(row[by], []).append(row)
            return {key: len(rows) for key, rows in groups.items()}
        ''',
    "tests/test_core.py": '''
        from plotkit.core import Plotter


        def test_plot_layers_problem_description():
            """A clear description of the problem: the plotter plots each layer."""
            assert Plotter().plot([], []) is not None
        ''',
    "docs/_static/theme.js": """\
        // a clear and concise description of the theme: the problem of the layer toggles
        function toggleLayer(layer) { return layer; }
        """,
}

TEMPLATE_ISSUE = """\
Grouping by a missing column raises KeyError
**Is your feature request related to a problem? Please describe.**
A clear and concise description of what the problem is.

When the column to group by is absent the plot fails with a KeyError instead of a clear message.

**Describe the solution you'd like**
A clear and concise description of what you want to happen.

Traceback (most recent call last):
  File "/home/me/analysis.py", line 9, in <module>
    Plotter().plot(rows, [Layer(by="species")])
  File "/venv/lib/python3.11/site-packages/plotkit/core.py", line 8, in plot
    self._compute(layer, data)
  File "/venv/lib/python3.11/site-packages/plotkit/core.py", line 12, in _compute
    return self._stat_of(layer)(data)
  File "/venv/lib/python3.11/site-packages/plotkit/core.py", line 15, in <lambda>
    return lambda data: summarize(data, layer.by)
  File "/venv/lib/python3.11/site-packages/plotkit/_stats/aggregate.py", line 5, in summarize
    groups.setdefault(row[by], []).append(row)
KeyError: 'species'

I ran tests/test_core.py and the tests pass.

### Versions
plotkit==0.12.1
numpy==1.26.0
Operating system: Ubuntu 22.04
"""


def test_a_templated_issue_with_a_traceback_leads_to_where_the_error_is_raised(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    """The template's questions do not pull its issue template, the test file the body mentions
    is no request for tests, the theme file sharing the template's words stays down, and the file
    and function the innermost frame raises in lead both views (issue 18)."""
    root = make_repo(TEMPLATE_REPO)
    store = Store(tmp_path / "idx" / "template.db")
    index_root(root, store)
    search = SemanticSearch(store)
    lexical_legs = ("bm25", "symbols", "path", "refs")
    resp = search.search(TEMPLATE_ISSUE, k=5, legs=lexical_legs)
    files = list(dict.fromkeys(h.path for h in resp.items))
    assert files[0] == "src/plotkit/_stats/aggregate.py", files
    for other in (".github/ISSUE_TEMPLATE/feature_request.md", "tests/test_core.py", "docs/_static/theme.js"):
        assert other not in files[:2], files
    code = search.search(TEMPLATE_ISSUE, k=3, legs=lexical_legs, view="code")
    assert (code.items[0].path, code.items[0].symbol) == ("src/plotkit/_stats/aggregate.py", "summarize"), [
        (h.path, h.symbol) for h in code.items
    ]
    store.close()


def test_the_ident_leg_runs_for_issue_text_only(search: SemanticSearch) -> None:
    """A long query's names, matched alone, find their chunk first; a short query has no such leg
    (on one-liners it cost the development set, bench/README.md, issue 18)."""
    long_terms = cap_terms(search.store, query_terms(PROSE * 8 + TRACEBACK))
    assert long_terms.long
    legs, _paths = search.legs(long_terms)
    assert legs["ident"], legs
    meta = search._meta(legs["ident"][:1])
    assert [m.path for m in meta.values()] == ["src/shipping/rates.py"]
    short_legs, _ = search.legs(query_terms("where is _zone_table"))
    assert "ident" not in short_legs


def test_an_issue_title_is_its_first_line_when_it_reads_as_a_short_query() -> None:
    body = "\n\n" + PROSE * 8 + TRACEBACK
    assert issue_title("Cache entries never expire" + body) == "Cache entries never expire"
    assert issue_title("  \n[Bug]: cannot give init value for RangeSlider\n" + PROSE) == (
        "[Bug]: cannot give init value for RangeSlider"
    )
    # no title: one line only, a template heading, a fence, a quote, a trace, a paragraph
    assert issue_title("Cache entries never expire") == ""
    for first in (
        "### Describe the bug",
        "```python",
        "> quoted reply",
        "Traceback (most recent call last):",
        "https://github.com/org/repo/issues/12",
        "at com.acme.Rates.quote(Rates.java:41)",
    ):
        assert issue_title(first + body) == "", first
    assert issue_title(PROSE + body) == ""
    assert issue_title("at least one rate is wrong" + body) == "at least one rate is wrong"
    # an agent's or a template's lead-in is no title: the line after it is
    for lead_in in ("Fix the following GitHub issue:\n\n", "Here is the issue:\n", "Issue:\nDescription:\n"):
        assert issue_title(lead_in + "Cache entries never expire" + body) == "Cache entries never expire"
    assert issue_title("Here is the issue:\n### Describe the bug" + body) == ""
    assert issue_title("Please fix this bug" + body) == ""
    terms = query_terms("Cache entries never expire" + body)
    assert terms.long and terms.title == "Cache entries never expire"
    assert query_terms("cache entries never expire\nin the job runner").title == ""  # a short query has none


TITLED_REPO = {
    "src/store/cache.py": '''
        def expire_entries(cache, now):
            """Drop the cache entries whose time to live has passed."""
            return {k: e for k, e in cache.items() if e.deadline > now}
        ''',
    "src/report/dashboard.py": '''
        def render_widget(histogram, palette):
            """Draw the nightly report's dashboard widget: a histogram in the chosen palette."""
            return palette.paint(histogram.bins)
        ''',
    **{
        f"src/jobs/job_{i}.py": f'''
            def run_job_{i}(queue, cache):
                """Take an entry from the queue, look it up in the cache; entries expire on their own."""
                entry = queue.pop()
                return cache.get(entry)
            '''
        for i in range(12)
    },
}
TITLED_BODY = (
    "Every night the report renders the dashboard widget, and the histogram in its palette shows "
    "numbers from last week, long after they should be gone. I looked at the widget, the palette and "
    "the histogram bins and they all seem fine, so the nightly report must read stale numbers. "
) * 4


@pytest.mark.parametrize("view", ["files", "code"])
def test_an_issue_title_in_common_words_finds_its_file_the_body_drowns(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, view: str
) -> None:
    """The title's words are in most chunks, so a long query's cap on prose words keeps the body's
    rare ones only and the file the title describes is no candidate; the title legs (the title
    searched as a short query) bring it in (issue 18, stop 31)."""
    root = make_repo(TITLED_REPO)
    store = Store(tmp_path / "idx" / "titled.db")
    index_root(root, store)
    text = "Cache entries never expire\n\n" + TITLED_BODY
    lexical_legs = ("bm25", "symbols", "path", "refs")
    found = {}
    for on in (True, False):
        search = SemanticSearch(store, config=dataclasses.replace(DEFAULT, title_leg=on))
        found[on] = [h.path for h in search.search(text, k=5, legs=lexical_legs, view=view).items]
    assert "src/store/cache.py" in found[True][:3], found
    assert "src/store/cache.py" not in found[False], found
    legs, _ = SemanticSearch(store).legs(cap_terms(store, query_terms(text)))
    assert legs["title"] and legs["title_symbols"], legs
    # a first line that is no title adds no title legs, nor does a short query
    headed = cap_terms(store, query_terms("### Bug\n" + TITLED_BODY))
    assert "title" not in SemanticSearch(store).legs(headed)[0]
    assert "title" not in SemanticSearch(store).legs(query_terms("cache entries never expire"))[0]
    store.close()
