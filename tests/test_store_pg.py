"""The team store end to end, against a real PostgreSQL + pgvector server (no mocks).

Most tests embed with a deterministic 384-dimension bag-of-words embedder so they run in
seconds; the start-warm test runs the real default model (loaded once per session) and
counts its encodes.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from conftest import PG_PASSWORD
from counting import CountingEmbedder
from store_repos import clone, commit_change, git, make_repo

from navigator.api import Navigator
from navigator.config import load_config
from navigator.frontends.cli import main
from navigator.team import TeamHit, TeamSymbol, resolve_store_url
from semantic.embed import FakeEmbedder, load_embedder
from storage.errors import SymbolNotFoundError, UsageError
from storage.pg import (
    PgStore,
    StoreAuthError,
    StoreReadOnlyError,
    StoreSchemaError,
    StoreUnavailableError,
    redact,
    redact_url,
)


def _fake() -> FakeEmbedder:
    return FakeEmbedder(384)


def _nav(root: Path, url: str, embedder: object | None = None) -> Navigator:
    return Navigator(root, embedder=embedder or _fake(), store_url=url)  # type: ignore[arg-type]


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as c:
        return int(c.execute(sql).fetchone()[0])  # type: ignore[index]


@pytest.fixture(scope="session")
def real_embedder():  # type: ignore[no-untyped-def]
    """The default model, loaded once for the session (slow on a shared CPU)."""
    import torch

    torch.set_num_threads(1)
    emb = load_embedder()
    _ = emb.dim
    return emb


# -- start warm: the issue's end-to-end test -----------------------------------------------------


@pytest.mark.slow
def test_two_published_commits_then_a_fresh_clone_embeds_nothing_published(
    tmp_path: Path, store_url: str, real_embedder: object
) -> None:
    repo = make_repo(tmp_path / "billing")
    first = git(repo, "rev-parse", "HEAD")
    counting = CountingEmbedder(real_embedder)  # type: ignore[arg-type]
    with _nav(repo, store_url, counting) as nav:
        one = nav.team().publish()
        assert (one.commit, one.branch, one.repo) == (first, "main", "billing")
        assert one.embedded == one.chunks > 0 and one.new_vectors == one.chunks
        second = commit_change(repo, {"billing/refunds.py": "def refund_order(order_id: int) -> bool:\n"
                                      "    \"\"\"Give the customer their money back.\"\"\"\n    return True\n"})  # fmt: skip
        before = counting.texts_embedded
        two = nav.team().publish()
        # content-addressed: only the new file's chunk was embedded and stored
        assert two.commit == second and not two.already_published
        assert two.new_files == 1 and two.new_chunks == 1 and two.embedded == 1
        assert counting.texts_embedded - before == 1

    fresh = clone(repo, tmp_path / "fresh")
    counting2 = CountingEmbedder(real_embedder)  # type: ignore[arg-type]
    with _nav(fresh, store_url, counting2) as nav2:
        nav2.index()
        warm = nav2.team().warm()
        assert warm.from_store == two.chunks, warm
        assert warm.embedded == 0 and counting2.texts_embedded == 0
        assert warm.vectors == warm.chunks == two.chunks
        assert warm.notes == ()
        # the fresh clone is fully searchable locally, with vectors from the store
        local = nav2.search("retry the ERP call with backoff", k=3)
        assert local.complete and local.items[0].path == "billing/erp.py"
        assert "vector" in local.items[0].ranks
        assert counting2.texts_embedded == 0
        # and across repositories, by meaning, naming repository, commit and path
        team = nav2.search("give the customer a refund", k=3, all_repos=True)
        top = team.items[0]
        assert isinstance(top, TeamHit)
        assert (top.repo, top.commit, top.path) == ("billing", second, "billing/refunds.py")
        assert "vector" in top.ranks


# -- publish ------------------------------------------------------------------------------------


def test_publish_is_idempotent_and_shares_content_across_branches_and_forks(
    tmp_path: Path, store_url: str
) -> None:
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url) as nav:
        first = nav.team().publish()
        assert not first.already_published and first.new_vectors == first.chunks
        again = nav.team().publish()
        assert again.already_published and again.new_chunks == 0
        git(repo, "checkout", "-q", "-b", "feature")
        branch = nav.team().publish()
        assert branch.already_published  # same commit: only the head of `feature` was added
    chunks = _count(store_url, "SELECT count(*) FROM nav_chunks")
    vectors = _count(store_url, "SELECT count(*) FROM nav_embeddings")
    assert chunks == vectors == first.chunks
    assert _count(store_url, "SELECT count(*) FROM nav_heads") == 2

    fork = clone(repo, tmp_path / "fork")
    commit_change(fork, {"billing/extra.py": "def extra_fee(amount: float) -> float:\n    return amount * 1.1\n"})
    embedder = _fake()
    with _nav(fork, store_url, embedder) as nav:
        report = nav.team().publish(repo="billing-fork")
    assert report.new_files == 1 and report.new_chunks == 1 and report.new_vectors == 1
    assert report.from_store == first.chunks and report.embedded == 1
    assert embedder.texts_embedded == 1
    assert _count(store_url, "SELECT count(*) FROM nav_chunks") == chunks + 1


def test_publish_refuses_a_dirty_tree_and_a_detached_head(tmp_path: Path, store_url: str) -> None:
    repo = make_repo(tmp_path / "billing")
    (repo / "billing" / "erp.py").write_text("# edited\n", encoding="utf-8")
    with _nav(repo, store_url) as nav, pytest.raises(UsageError, match=r"changes not in .*billing/erp.py.*--allow-dirty"):
        nav.team().publish()
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "checkout", "-q", "--detach")
    with _nav(repo, store_url) as nav, pytest.raises(UsageError, match=r"detached HEAD.*--branch"):
        nav.team().publish()


# -- across repositories ------------------------------------------------------------------------


def test_all_repos_search_and_def_name_repository_commit_and_path(tmp_path: Path, store_url: str) -> None:
    billing = make_repo(tmp_path / "billing")
    shop = make_repo(
        tmp_path / "shop",
        {"shop/cart.py": "class Cart:\n    def add_item(self, sku: str) -> None:\n        self.items.append(sku)\n",
         "shop/erp_sync.py": "def retry_erp_call(job):\n    \"\"\"Retry a failed ERP sync job.\"\"\"\n    return job\n"},
    )  # fmt: skip
    shas = {}
    for root in (billing, shop):
        with _nav(root, store_url) as nav:
            shas[root.name] = nav.team().publish().commit
    with _nav(shop, store_url) as nav:
        resp = nav.search("retry_erp_call", k=5, all_repos=True)
        assert resp.complete and resp.source == "team-store"
        found = {(h.repo, h.commit, h.path) for h in resp.items if isinstance(h, TeamHit)}
        assert ("billing", shas["billing"], "billing/erp.py") in found
        assert ("shop", shas["shop"], "shop/erp_sync.py") in found
        defs = nav.definitions("retry_erp_call", all_repos=True)
        assert {(s.repo, s.path, s.line) for s in defs.items if isinstance(s, TeamSymbol)} == {
            ("billing", "billing/erp.py", 8),
            ("shop", "shop/erp_sync.py", 1),
        }
        assert nav.definitions("Cart.add_item", all_repos=True).items[0].repo == "shop"  # type: ignore[attr-defined]
        with pytest.raises(SymbolNotFoundError, match="retry_erp_call"):
            nav.definitions("retry_erp_cal", all_repos=True)

    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(shop), "search", "--all-repos", "--store", store_url, "parse an invoice"])
    assert out.exit_code == 0, out.output
    assert f"billing@{shas['billing'][:8]}:billing/invoices.py" in out.output
    out = runner.invoke(main, ["-C", str(shop), "def", "--all-repos", "--json", "--store", store_url, "Cart"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["items"][0]["repo"] == "shop" and data["items"][0]["commit"] == shas["shop"]


def test_cli_index_starts_warm_from_nav_store_and_status_hides_the_password(
    tmp_path: Path, store_url: str, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """`nav index --no-embed` with NAV_STORE on a fresh clone takes the store's vectors (no model
    is loaded: the published vectors are keyed by the default model's id, computed here by a
    stand-in embedder so this test stays fast)."""
    from semantic.embed import load_embedder

    model_id = load_embedder().model_id  # the default runtime's id only: the model is not loaded
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url, FakeEmbedder(384, model_id=model_id)) as nav:
        published = nav.team().publish()
    fresh = clone(repo, tmp_path / "fresh")
    monkeypatch.setenv("NAV_STORE", store_url)
    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(fresh), "index", "--no-embed"])
    assert out.exit_code == 0, out.output
    n = published.chunks
    assert f"vectors: {n}/{n} chunks ({n} from the team store, 0 embedded here, 0 pushed back)" in out.output
    out = runner.invoke(main, ["-C", str(fresh), "index", "--no-embed", "--json"])
    assert json.loads(out.output)["store"]["from_store"] == 0  # already cached locally
    out = runner.invoke(main, ["-C", str(fresh), "status"])
    assert out.exit_code == 0 and PG_PASSWORD not in out.output
    assert "store:    postgresql://nav:***@127.0.0.1" in out.output


# -- access ---------------------------------------------------------------------------------------

_READER_PW = "reader-Pw-9"


def _make_reader(url: str) -> str:
    """The README's GRANTs for a read-only role; returns the reader's URL."""
    db = url.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("DROP ROLE IF EXISTS nav_reader_" + db)
        c.execute(f"CREATE ROLE nav_reader_{db} LOGIN PASSWORD '{_READER_PW}'")
        c.execute(f"GRANT CONNECT ON DATABASE {db} TO nav_reader_{db}")
        c.execute(f"GRANT USAGE ON SCHEMA public TO nav_reader_{db}")
        c.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO nav_reader_{db}")
    return url.replace(f"nav:{PG_PASSWORD}@", f"nav_reader_{db}:{_READER_PW}@")


def test_read_only_role_searches_and_warms_but_cannot_publish(tmp_path: Path, store_url: str) -> None:
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url) as nav:
        published = nav.team().publish()
    reader = _make_reader(store_url)
    before = _count(store_url, "SELECT count(*) FROM nav_embeddings")
    fresh = clone(repo, tmp_path / "fresh")
    commit_change(fresh, {"billing/new.py": "def brand_new() -> int:\n    return 1\n"})
    with _nav(fresh, reader) as nav:
        nav.index()
        warm = nav.team().warm()
        assert warm.from_store == published.chunks and warm.embedded == 1 and warm.pushed == 0
        assert any("read-only" in n for n in warm.notes)
        resp = nav.search("parse invoice", all_repos=True, k=3)
        assert resp.complete and resp.items[0].path == "billing/invoices.py"
        with pytest.raises(StoreReadOnlyError) as err:
            nav.team().publish()
    msg = str(err.value)
    assert "read-only" in msg and "nav_reader_" in msg and "README" in msg
    assert _READER_PW not in msg and "***" in msg
    assert _count(store_url, "SELECT count(*) FROM nav_embeddings") == before
    assert _count(store_url, "SELECT count(*) FROM nav_commits") == 1


def test_a_wrong_password_is_a_clear_error_that_never_shows_it(tmp_path: Path, store_url: str) -> None:
    repo = make_repo(tmp_path / "billing")
    wrong = store_url.replace(PG_PASSWORD, "Wr0ng-pass-xyz")
    with _nav(repo, wrong) as nav, pytest.raises(StoreAuthError) as err:
        nav.team().publish()
    assert "refused the credentials" in str(err.value) and "PGPASSFILE" in str(err.value)
    assert "Wr0ng-pass-xyz" not in str(err.value)
    runner = CliRunner()
    out = runner.invoke(main, ["-C", str(repo), "search", "--all-repos", "--store", wrong, "invoice"])
    assert "Wr0ng-pass-xyz" not in out.output
    # the local index answers, and says the store could not
    assert out.exit_code == 0 and "team store unavailable" in out.output and "refused the credentials" in out.output
    out = runner.invoke(main, ["-C", str(repo), "index", "--no-embed", "--store", wrong])
    assert out.exit_code == 0, out.output
    assert "team store not used" in out.output and "Wr0ng-pass-xyz" not in out.output
    out = runner.invoke(main, ["-C", str(repo), "publish", "--store", wrong])
    assert out.exit_code == 5 and "refused the credentials" in out.output and "Wr0ng-pass-xyz" not in out.output


def test_missing_vector_extension_is_a_clear_error_and_creates_nothing(
    tmp_path: Path, pg_server: object, store_url: str
) -> None:
    """A database owner who is not a superuser cannot create pgvector (not a trusted extension)."""
    db = store_url.rsplit("/", 1)[1]
    with psycopg.connect(store_url, autocommit=True) as c:
        c.execute("DROP ROLE IF EXISTS nav_owner_" + db)
        c.execute(f"CREATE ROLE nav_owner_{db} LOGIN PASSWORD 'owner-pw-1'")
        c.execute(f"ALTER DATABASE {db} OWNER TO nav_owner_{db}")
        c.execute(f"ALTER SCHEMA public OWNER TO nav_owner_{db}")
    owner = store_url.replace(f"nav:{PG_PASSWORD}@", f"nav_owner_{db}:owner-pw-1@")
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, owner) as nav, pytest.raises(StoreSchemaError) as err:
        nav.team().publish()
    msg = str(err.value)
    assert "`vector` extension" in msg and "CREATE EXTENSION vector" in msg and "owner-pw-1" not in msg
    with psycopg.connect(store_url) as c:
        assert c.execute("SELECT to_regclass('nav_meta')").fetchone() == (None,)
        assert c.execute("SELECT count(*) FROM pg_extension WHERE extname='pg_trgm'").fetchone() == (0,)


def test_a_reader_on_an_empty_store_is_told_to_publish_first(store_url: str) -> None:
    with PgStore(store_url) as pg, pytest.raises(StoreSchemaError, match="nav publish"):
        pg.ensure_schema(write=False)


# -- configuration and redaction (pure) ----------------------------------------------------------


def test_redaction_covers_url_parameter_and_environment_passwords(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert redact_url("postgresql://u:p%40ss@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("postgresql://h/db?user=u&password=s3cr3t&x=1") == "postgresql://h/db?user=u&password=***&x=1"
    monkeypatch.setenv("PGPASSWORD", "from-env-pw")
    url = "postgresql://u:p%40ss@h/db"
    assert redact("failed for p@ss and p%40ss and from-env-pw", url) == "failed for *** and *** and ***"


def test_store_url_precedence_and_config_warnings(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".nav.toml").write_text('[store]\nurl = "postgresql://ci:hunter22@db/nav"\n', encoding="utf-8")
    config = load_config(tmp_path)
    assert config.store.url == "postgresql://ci:hunter22@db/nav"
    assert any("carries a password" in w and "hunter22" not in w for w in config.warnings)
    assert "hunter22" not in repr(config)
    monkeypatch.delenv("NAV_STORE", raising=False)
    assert resolve_store_url(config) == "postgresql://ci:hunter22@db/nav"
    monkeypatch.setenv("NAV_STORE", "postgresql://env@db/nav")
    assert resolve_store_url(config) == "postgresql://env@db/nav"
    assert resolve_store_url(config, "postgresql://flag@db/nav") == "postgresql://flag@db/nav"
    (tmp_path / ".nav.toml").write_text('[store]\nurl = "mysql://x:pw123@db"\n', encoding="utf-8")
    config = load_config(tmp_path)
    assert config.store.url == "" and any("not a postgresql:// URL" in w and "pw123" not in w for w in config.warnings)


def test_a_bad_store_url_names_the_value_without_its_password() -> None:
    with pytest.raises(UsageError, match=r"must start with postgresql://, got 'http://u:\*\*\*@h'"):
        PgStore("http://u:secretpw@h")



def test_the_readme_roles_a_writer_publishes_and_a_reader_reads(tmp_path: Path, store_url: str) -> None:
    """The README's SQL, as written: an administrator creates the extensions and two roles."""
    db = store_url.rsplit("/", 1)[1]
    writer, reader = f"w_{db}"[:60], f"r_{db}"[:60]
    with psycopg.connect(store_url, autocommit=True) as c:
        for sql in (
            "CREATE EXTENSION IF NOT EXISTS vector",
            "CREATE EXTENSION IF NOT EXISTS pg_trgm",
            f"CREATE ROLE {writer} LOGIN PASSWORD 'writer-Pw-1'",
            f"GRANT CREATE, USAGE ON SCHEMA public TO {writer}",
            f"CREATE ROLE {reader} LOGIN PASSWORD 'reader-Pw-1'",
            f"GRANT CONNECT ON DATABASE {db} TO {reader}",
            f"GRANT USAGE ON SCHEMA public TO {reader}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {writer} IN SCHEMA public GRANT SELECT ON TABLES TO {reader}",
        ):
            c.execute(sql)
    writer_url = store_url.replace(f"nav:{PG_PASSWORD}@", f"{writer}:writer-Pw-1@")
    reader_url = store_url.replace(f"nav:{PG_PASSWORD}@", f"{reader}:reader-Pw-1@")
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, writer_url) as nav:
        assert nav.team().publish().new_files == 4
    with _nav(repo, reader_url) as nav:
        assert nav.definitions("parse_invoice", all_repos=True).items[0].path == "billing/invoices.py"
        assert not nav.team().pg.writable()
    out = CliRunner().invoke(main, ["-C", str(repo), "store", "status", "--store", reader_url])
    assert out.exit_code == 0, out.output
    assert "read-only" in out.output and "billing@" in out.output and "reader-Pw-1" not in out.output


def test_the_password_can_come_from_pgpassfile(tmp_path: Path, store_url: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from urllib.parse import urlsplit

    parts = urlsplit(store_url)
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"{parts.hostname}:{parts.port}:{parts.path[1:]}:nav:{PG_PASSWORD}\n", encoding="utf-8")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    bare = store_url.replace(f"nav:{PG_PASSWORD}@", "nav@")
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, bare) as nav:
        assert nav.team().publish().new_files == 4
        again = nav.team().publish()
        assert again.already_published and again.files == 4 and again.chunks > 4


def test_mcp_search_and_def_take_all_repos(tmp_path: Path, store_url: str) -> None:
    import anyio
    from mcp import Client

    from navigator.frontends.mcp_server import build_server

    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url) as nav:
        sha = nav.team().publish().commit

        async def go() -> tuple[str, str]:
            async with Client(build_server(nav)) as client:
                s = await client.call_tool("search", {"text": "parse an invoice", "all_repos": True, "limit": 3})
                d = await client.call_tool("def", {"name": "ErpClient", "all_repos": True})
                return s.content[0].text, d.content[0].text  # type: ignore[union-attr]

        search_text, def_text = anyio.run(go)
    assert f"billing@{sha[:8]}:billing/invoices.py" in search_text
    assert def_text.startswith(f"billing@{sha[:8]}:billing/erp.py:5:7  class  ErpClient")


def test_a_store_from_a_newer_nav_is_refused_by_name(tmp_path: Path, store_url: str) -> None:
    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url) as nav:
        nav.team().publish()
    with psycopg.connect(store_url, autocommit=True) as c:
        c.execute("UPDATE nav_meta SET value = '99' WHERE key = 'schema_version'")
    with PgStore(store_url) as pg, pytest.raises(StoreSchemaError, match="schema version 99, newer than this nav"):
        pg.ensure_schema(write=False)


def test_no_password_reaches_the_logs(tmp_path: Path, store_url: str, caplog) -> None:  # type: ignore[no-untyped-def]
    import logging

    caplog.set_level(logging.DEBUG)
    repo = make_repo(tmp_path / "billing")
    wrong = store_url.replace(PG_PASSWORD, "Leaky-pw-42")
    with _nav(repo, wrong) as nav:
        with pytest.raises(StoreAuthError):
            nav.team().publish()
        resp = nav.search("parse invoice", all_repos=True)
        assert resp.complete is False
    with _nav(repo, store_url) as nav:
        nav.team().publish()
        nav.search("parse invoice", all_repos=True)
    text = "\n".join(r.getMessage() for r in caplog.records)
    # the failure and the publish were logged, naming the store, and no password
    assert "all-repos search answered locally" in text and "refused the credentials" in text
    assert "published billing@" in text and "postgresql://nav:***@127.0.0.1" in text
    assert "Leaky-pw-42" not in text and PG_PASSWORD not in text


def test_one_team_store_answers_many_threads_at_once(tmp_path: Path, store_url: str) -> None:
    """As in the daemon: several threads share one Navigator, hence one connection to the store."""
    from concurrent.futures import ThreadPoolExecutor

    repo = make_repo(tmp_path / "billing")
    with _nav(repo, store_url) as nav:
        nav.team().publish()
        expected = [h.path for h in nav.search("parse an invoice", k=5, all_repos=True).items]

        def ask(i: int) -> list[str]:
            resp = (
                nav.definitions("invoice_total", all_repos=True)
                if i % 2
                else nav.search("parse an invoice", k=5, all_repos=True)
            )
            assert resp.complete and resp.source == "team-store", resp.reason  # not the local fallback
            return [h.path for h in resp.items]

        with ThreadPoolExecutor(max_workers=6) as pool:
            answers = list(pool.map(ask, range(60)))
    assert all(a == expected for a in answers[0::2])
    assert all(a == ["billing/invoices.py"] for a in answers[1::2])


@pytest.mark.slow
def test_cli_all_repos_asks_the_warm_daemon_about_the_callers_store(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`nav search --all-repos` and `nav def --all-repos` are answered by the root's daemon (its
    model stays loaded between calls, as for local search), about the store the caller's shell
    names: the daemon was started without any."""
    import contextlib
    import os
    import signal

    from navigator.frontends.client import DaemonClient
    from navigator.paths import daemon_paths

    billing = make_repo(tmp_path / "billing")
    with _nav(billing, store_url) as nav:
        sha = nav.team().publish().commit
    shop = make_repo(tmp_path / "shop")
    monkeypatch.delenv("NAV_STORE", raising=False)
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    client = DaemonClient(shop)  # started here, with no team store in its environment
    try:
        before = client.daemon_status()["requests"]
        monkeypatch.delenv("NAV_NO_DAEMON", raising=False)
        monkeypatch.setenv("NAV_STORE", store_url)  # the caller's shell names the store
        runner = CliRunner()
        out = runner.invoke(main, ["-C", str(shop), "search", "--all-repos", "--json", "parse an invoice"])
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        assert data["source"] == "team-store", data
        assert any(h["repo"] == "billing" and h["commit"] == sha for h in data["items"])
        out = runner.invoke(main, ["-C", str(shop), "def", "--all-repos", "--json", "retry_erp_call"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["items"][0]["repo"] == "billing"
        assert client.daemon_status()["requests"] >= before + 2  # both answered by the daemon
        assert PG_PASSWORD not in (daemon_paths(shop).log.read_text() if daemon_paths(shop).log.exists() else "")
    finally:
        client.stop()
        info = daemon_paths(shop).info
        if info.exists():  # never leave a daemon behind
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


def test_all_repos_path_leg_ranks_files_by_their_path_words(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The team store's path leg, as local search's: a file whose folders and name are the
    query's words ranks by them (not by its repository's name), in the asked languages only; a
    new head's files are seen at once; a failing path leg costs a note, not the answer."""
    files = {
        "payments/refunds/policy.py": "def apply(amount):\n    return amount * 0.9\n",
        "payments/charges.py": "def charge(card, amount):\n    return card.debit(amount)\n",
        "web/refunds/policy.go": "package policy\n\nfunc Apply(a int) int { return a }\n",
        "notes/misc.py": "def helper():\n    return None\n",
    }
    repo = make_repo(tmp_path / "shop", files)
    with _nav(repo, store_url) as nav:
        nav.team().publish()
        team = nav.team()
        resp = team.search("refunds policy", k=10)
        assert resp.complete and resp.notes == ()
        got = {h.path: h.ranks for h in resp.items}  # type: ignore[attr-defined]
        assert "path" in got["payments/refunds/policy.py"] and "path" in got["web/refunds/policy.go"], got
        assert "path" not in got.get("notes/misc.py", {})
        # `shop`, the repository's name, is no path word of its files
        assert not any("path" in r for r in (h.ranks for h in team.search("shop", k=10).items))
        go_only = team.search("refunds policy", k=10, languages=["go"])
        assert {h.path for h in go_only.items} == {"web/refunds/policy.go"}

        commit_change(repo, {"payments/refunds/window.py": "def days():\n    return 30\n"})
        nav.team().publish()
        assert "path" in {h.path: h.ranks for h in team.search("refunds window", k=10).items}[
            "payments/refunds/window.py"
        ]

        without = team.search("refunds policy", k=10, legs=("bm25", "vector", "symbols"))
        assert without.items and not any("path" in h.ranks for h in without.items)

        def broken(*_a: object, **_k: object) -> object:
            raise StoreUnavailableError("the store went away while listing files")

        monkeypatch.setattr(team.pg, "heads_signature", broken)
        failed = team.search("refunds policy", k=10)
        assert failed.items and any("path leg unavailable" in n for n in failed.notes)
        assert not failed.complete and "path leg unavailable" in (failed.reason or "")
